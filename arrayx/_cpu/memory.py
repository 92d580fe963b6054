"""Large result arrays of fused groups and products, whose memory is reused once they die.

A fresh NumPy array of megabytes gets fresh pages from the kernel, which
zeroes each one when it is first written: on this 2-core EPYC, writing a new
64 MB array took 6.2 ms against 3.1 ms for an existing one (544 page faults),
so a fused group that computes in one pass what NumPy does in five spent a
third of its time waiting for zeroed pages. As CuPy's memory pool does for
device memory, arrayx keeps the bytes of a dead result and hands them to the
next result of the same size.

An array from `empty` is a view of pooled bytes through a small owner
object: every view NumPy derives from it keeps that owner alive, so the
bytes return to the pool only when the array and all its views are gone.
The pool holds at most POOL_MAX_BYTES of free memory. When a dead result
does not fit, the bytes that came back longest ago go first: the sizes a
program uses now are the ones it asks for next, and results of work that
ran earlier must not keep them out. `release()` gives it all back to the
system.
"""

import os
import threading
import weakref
from collections import OrderedDict
from math import prod

import numpy as np

# Free bytes the pool may hold; a dead result beyond that is freed at once.
POOL_MAX_BYTES = 512 << 20

_free = {}        # nbytes -> [uint8 arrays no result uses]
_returned = OrderedDict()   # id -> (nbytes, array) of the same arrays, the one that came back longest ago first
_free_bytes = 0
# Results die in whatever thread drops them last; re-entrant, since a
# garbage collection inside a locked section may run a finalizer there.
_lock = threading.RLock()


def _after_fork():
    # The lock may have been held by another thread of the parent.
    global _lock
    _lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


class _Owner:
    """The base of a pooled array: NumPy reads the memory through its
    `__array_interface__`, and its death returns the bytes."""

    __slots__ = ("__array_interface__", "__weakref__")


def empty(shape, dtype):
    """An uninitialized writable C-contiguous array of `shape` and NumPy
    `dtype`, in pooled memory."""
    global _free_bytes
    nbytes = prod(shape) * dtype.itemsize
    with _lock:
        spare = _free.get(nbytes)
        raw = spare.pop() if spare else None
        if raw is not None:
            del _returned[id(raw)]
            _free_bytes -= nbytes
    if raw is None:
        try:
            raw = np.empty(max(nbytes, 1), np.uint8)
        except MemoryError:   # the pool's spare bytes may be what is missing
            release()
            raw = np.empty(max(nbytes, 1), np.uint8)
    owner = _Owner()
    owner.__array_interface__ = {"data": (raw.ctypes.data, False), "shape": tuple(shape),
                                 "typestr": dtype.str, "version": 3}
    array = np.asarray(owner)
    weakref.finalize(owner, _give_back, nbytes, raw).atexit = False
    return array


def is_pooled(array):
    """Whether `array` is one `empty` returned (its memory is the pool's)."""
    return type(array.base) is _Owner


def _give_back(nbytes, raw):
    global _free_bytes
    if nbytes > POOL_MAX_BYTES:
        return
    with _lock:
        while _free_bytes + nbytes > POOL_MAX_BYTES:
            _, (size, old) = _returned.popitem(last=False)
            spare = _free[size]
            del spare[next(i for i, r in enumerate(spare) if r is old)]
            _free_bytes -= size
        _free.setdefault(nbytes, []).append(raw)
        _returned[id(raw)] = (nbytes, raw)
        _free_bytes += nbytes


def held_bytes():
    """Bytes the pool holds for reuse (no live array uses them)."""
    return _free_bytes


def release():
    """Give every free pooled byte back to the system."""
    global _free_bytes
    with _lock:
        _free.clear()
        _returned.clear()
        _free_bytes = 0
