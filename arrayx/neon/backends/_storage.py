"""Storage and views of the neon Tensor, over arrayx arrays.

A neon Tensor is mutable and its views share memory with it; an arrayx array is
immutable. The shim reconciles the two without copying buffers by hand:

- a `Storage` holds one arrayx Array, the whole buffer of a base tensor;
- a tensor is `(storage, chain)`: the chain is the list of view operations
  (slice, reshape, permute, share, take) that lead from the storage's array to
  the tensor's elements;
- reading a tensor applies its chain to the storage's current array, lazily;
- writing a tensor pushes the new value back through the chain, each step
  inverted by a functional update (`update_slice`/`scatter` nodes, reshape and
  permute back), and rebinds the storage's array to the result.

Every tensor viewing the storage therefore sees every write, and nothing is
computed until a value is needed. View operations are plain tuples:

    ("slice", ((start, step, length), ...))   one triple per axis
    ("reshape", shape)
    ("permute", axes)
    ("share", size, shape)      the first `size` elements in C order, reshaped
    ("take", axis, indices)     integer-array selection along one axis

Consecutive slices compose into one slice, consecutive reshapes and permutes
into one, so a view of a view of a view is still one arrayx node per step.
"""

import operator

import numpy as np

import arrayx as xp


class Storage:
    """The buffer of a base tensor: an arrayx Array, rebound by every write."""

    __slots__ = ("array", "__weakref__")

    def __init__(self, array):
        self.array = array


def fresh(array):
    """A new handle on the same node: setitem on it leaves `array` untouched."""
    return xp.asarray(array, copy=True)


def _slice_object(triple):
    start, step, length = triple
    if length == 0:
        return slice(0, 0, 1)
    stop = start + step * length
    return slice(start, stop if stop >= 0 else None, step)


def _slice_key(triples):
    return tuple(_slice_object(t) for t in triples)


def op_shape(op, shape):
    """The shape a view operation gives an array of `shape`."""
    kind = op[0]
    if kind == "slice":
        return tuple(t[2] for t in op[1])
    if kind == "reshape":
        return op[1]
    if kind == "permute":
        return tuple(shape[a] for a in op[1])
    if kind == "share":
        return op[2]
    if kind == "take":
        out = list(shape)
        out[op[1]] = op[2].shape[0]
        return tuple(out)
    raise AssertionError(kind)


def apply(array, op):
    """The view `op` of `array` (lazy)."""
    kind = op[0]
    if kind == "slice":
        return array[_slice_key(op[1])]
    if kind == "reshape":
        return xp.reshape(array, op[1])
    if kind == "permute":
        return xp.permute_dims(array, op[1])
    if kind == "share":
        return xp.reshape(xp.reshape(array, (-1,))[0:op[1]], op[2])
    if kind == "take":
        return xp.take(array, op[2], axis=op[1])
    raise AssertionError(kind)


def unapply(before, op, value):
    """`before` with its view `op` replaced by `value` (a functional update)."""
    kind = op[0]
    if kind == "slice":
        out = fresh(before)
        out[_slice_key(op[1])] = value
        return out
    if kind == "reshape":
        return xp.reshape(value, before.shape)
    if kind == "permute":
        inverse = [0] * len(op[1])
        for i, a in enumerate(op[1]):
            inverse[a] = i
        return xp.permute_dims(value, tuple(inverse))
    if kind == "share":
        flat = fresh(xp.reshape(before, (-1,)))
        flat[0:op[1]] = xp.reshape(value, (-1,))
        return xp.reshape(flat, before.shape)
    if kind == "take":
        out = fresh(before)
        out[(slice(None),) * op[1] + (op[2],)] = value
        return out
    raise AssertionError(kind)


def extend(chain, op, shape):
    """`chain` followed by `op` (applied to an array of `shape`), merged where possible."""
    kind = op[0]
    if kind == "slice" and all(t == (0, 1, n) for t, n in zip(op[1], shape)):
        return chain
    if kind == "reshape" and op[1] == shape:
        return chain
    if kind == "permute" and tuple(op[1]) == tuple(range(len(shape))):
        return chain
    if chain:
        last = chain[-1]
        if kind == "slice" and last[0] == "slice":
            merged = tuple((s1 + st1 * s2, st1 * st2, n2)
                           for (s1, st1, _), (s2, st2, n2) in zip(last[1], op[1]))
            return chain[:-1] + (("slice", merged),)
        if kind == "reshape" and last[0] == "reshape":
            return chain[:-1] + (op,)
        if kind == "permute" and last[0] == "permute":
            return chain[:-1] + (("permute", tuple(last[1][a] for a in op[1])),)
    return chain + (op,)


def read(storage, chain):
    """The elements the chain selects from the storage's current array (lazy)."""
    array = storage.array
    for op in chain:
        array = apply(array, op)
    return array


def write(storage, chain, value):
    """Replace the elements the chain selects by `value` (same shape and dtype)."""
    if not chain:
        storage.array = value
        return
    arrays = [storage.array]
    for op in chain[:-1]:
        arrays.append(apply(arrays[-1], op))
    for op, before in zip(reversed(chain), reversed(arrays)):
        value = unapply(before, op, value)
    storage.array = value


def _is_integer(k):
    if isinstance(k, (bool, np.bool_)):
        return False
    try:
        operator.index(k)
    except TypeError:
        return False
    return True


def index_ops(key, shape, device, tensor_type):
    """The view operations of neon's `tensor[key]` on a tensor of `shape`.

    neon semantics: an integer index keeps its axis (as a slice of length 1),
    and a result of more than two dimensions drops its axes of length 1 until it
    has two. A one-dimensional integer array (list, NumPy array, Tensor) selects
    along its axis, as `take` does; at most one per key.
    """
    items = key if isinstance(key, tuple) else (key,)
    if sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("Tensor.__getitem__: an index can only have a single ellipsis ('...')")
    n_axes = sum(1 for k in items if k is not None and k is not Ellipsis)
    if n_axes > len(shape):
        raise IndexError(f"Tensor.__getitem__: too many indices for a tensor of shape {shape}: {key!r}")
    triples = []
    newaxes = []     # positions in the result where None inserts an axis
    take = None
    axis = 0
    for k in items:
        if k is None:
            newaxes.append(axis + len(newaxes))
        elif k is Ellipsis:
            for _ in range(len(shape) - n_axes):
                triples.append((0, 1, shape[axis]))
                axis += 1
        elif isinstance(k, slice):
            try:
                start, stop, step = k.indices(shape[axis])
            except (TypeError, ValueError) as e:
                raise IndexError(f"Tensor.__getitem__: invalid slice {k!r}: {e}") from None
            n = len(range(start, stop, step))
            triples.append((start, step, n) if n else (0, 1, 0))
            axis += 1
        elif _is_integer(k):
            i = operator.index(k)
            n = shape[axis]
            if not -n <= i < n:
                raise IndexError(f"Tensor.__getitem__: index {i} is out of bounds for axis {axis} with size {n}")
            triples.append((i % n, 1, 1))
            axis += 1
        else:
            if take is not None:
                raise IndexError("Tensor.__getitem__: at most one integer-array index is supported")
            take = (axis, _index_array(k, device, tensor_type))
            triples.append((0, 1, shape[axis]))
            axis += 1
    while axis < len(shape):
        triples.append((0, 1, shape[axis]))
        axis += 1
    ops = [("slice", tuple(triples))]
    cur = tuple(t[2] for t in triples)
    if take is not None:
        ops.append(("take", take[0], take[1]))
        cur = op_shape(ops[-1], cur)
    if newaxes:
        out = list(cur)
        for p in newaxes:
            out.insert(p, 1)
        cur = tuple(out)
        ops.append(("reshape", cur))
    out = list(cur)
    while len(out) > 2 and 1 in out:
        out.remove(1)
    if tuple(out) != cur:
        ops.append(("reshape", tuple(out)))
    return ops


def _index_array(k, device, tensor_type):
    """A one-dimensional arrayx integer array from a list, NumPy array, Tensor or Array."""
    if isinstance(k, tensor_type):
        k = k.get()
    if isinstance(k, xp.Array):
        arr = k
    else:
        host = np.asarray(k)
        if host.dtype.kind not in "iu":
            if host.dtype.kind == "f" and host.size and np.all(host == np.rint(host)):
                host = host.astype(np.int64)
            elif host.size == 0:
                host = host.astype(np.int64)
            else:
                raise IndexError(f"Tensor.__getitem__: invalid index {k!r}; expected an int, a slice, ..., None "
                                 f"or an integer array")
        arr = xp.asarray(host, device=device)
    if arr.ndim != 1:
        arr = xp.reshape(arr, (-1,))
    return arr
