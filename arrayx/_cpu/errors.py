"""NumPy's floating-point error state while executor code runs: ignore all.

The standard's special cases say which results are inf or nan; NumPy's
warnings about them would be noise. `np.errstate` builds its state object at
every entry (0.3-0.6 us, which a cached plan on small arrays feels). NumPy 2
keeps that state in a context variable, so the "ignore" state is built once
and set directly; where a NumPy has no such variable, `np.errstate` does the
same job more slowly. The state is built at import, so it carries the buffer
size NumPy had then (`np.setbufsize` changes only how ufuncs chunk work).
"""

import functools

import numpy as np

from ..executors.base import entering

try:
    from numpy._core._ufunc_config import _extobj_contextvar as _state
except ImportError:
    _state = None
else:
    with np.errstate(all="ignore"):
        _IGNORE = _state.get()


if _state is not None:
    enter = functools.partial(_state.set, _IGNORE)   # no Python frame: a program enters it at every run
    leave = _state.reset
else:
    enter, leave = entering(functools.partial(np.errstate, all="ignore"))

# (enter, leave): `token = enter()` ignores all errors until `leave(token)`.
IGNORING = (enter, leave)


def ignoring_errors(fn):
    """`fn`, run with NumPy's floating-point errors ignored."""
    @functools.wraps(fn)
    def quiet(*args):
        token = enter()
        try:
            return fn(*args)
        finally:
            leave(token)
    return quiet
