"""Calling a native kernel over NumPy buffers.

Through the launcher (launcher.c), a CPython extension built once per Python
and kept in the disk cache, a call costs about a quarter of a microsecond,
and a call's pieces run on the launcher's threads; through ctypes, where the
launcher cannot be built (no Python headers), a call costs a few
microseconds and its pieces run on the CPU executor's workers. Both pass the
kernel the buffers' data pointers (a NumPy scalar's: the address of its
value) and release the GIL when asked to.
"""

import ctypes
import functools
import importlib.machinery
import importlib.util
import sys
import sysconfig
from pathlib import Path

import numpy as np

from ...renderer import toolchain
from .. import workers

SOURCE = Path(__file__).with_name("launcher.c")
MODULE = "arrayx_native_launcher"


@functools.cache
def launcher():
    """The launcher module, or None where it cannot be built or does not
    read NumPy's buffers as NumPy does."""
    include = sysconfig.get_paths().get("include")
    if toolchain.compiler() is None or not include or not Path(include, "Python.h").exists():
        return None
    source = SOURCE.read_text()
    flags = ("-O2", "-shared", "-fPIC", "-pthread")
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    path = toolchain.library_path(source, "launcher", flags, extra=(sys.version,), suffix=suffix)
    try:
        if not Path(path).exists():
            toolchain.build(source, path, flags + ("-I", include), language="c")
        spec = importlib.util.spec_from_file_location(MODULE, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except (toolchain.CompileError, OSError, ImportError):
        return None
    return module if _reads_like_numpy(module) else None


def _reads_like_numpy(module):
    """Whether the launcher finds every dtype's array data and scalar value,
    and arrays' shapes and strides, where NumPy says they are."""
    for code in "?bhilqBHILQefdFD":
        array = np.arange(3).astype(code)
        scalar = array[1]
        if module.address(array) != array.ctypes.data:
            return False
        if ctypes.string_at(module.address(scalar), array.itemsize) != scalar.tobytes():
            return False
    grid = np.zeros((3, 4, 5))
    views = (grid, grid[::2, 1:, ::-1].T, grid[1, :, 2], np.ones(()))
    expected = [v for a in views for v in (a.ndim, *a.shape, *a.strides)]
    return module.layout_key(*views) == np.array(expected, np.longlong).tobytes()


def layout_key():
    """The launcher's layout_key(*arrays) (see launcher.c), or None where
    there is no launcher."""
    module = launcher()
    return None if module is None else module.layout_key


@functools.cache
def runner():
    """(the function calling a kernel, what names the kernel to it as a
    function of a compiler.Kernel, the function running a kernel's pieces
    on several threads). The first is run(kernel, meta address, start,
    stop, rstart, rstop, partial address or None, release, *buffers): the
    kernel over [start, stop) (and reduced points [rstart, rstop)) of
    `buffers` (NumPy arrays and scalars), without the GIL with `release`.
    The last is split(kernel, meta address, outer, reduced, split_reduced,
    pieces, grain, partial address or None, partial stride, helpers,
    *buffers), as launcher.c describes. The launcher's functions take the
    kernel's address; where there is no launcher, `without_launcher()`'s
    take its ctypes function."""
    module = launcher()
    if module is not None:
        return module.run, _address, module.split
    return without_launcher()


def without_launcher():
    """runner()'s three functions through ctypes, a call's pieces claimed by
    the calling thread and the CPU executor's workers."""
    return _run_through_ctypes, _function, _split_on_workers


def _address(kernel):
    return kernel.address


def _function(kernel):
    return kernel.function


def _run_through_ctypes(function, meta, start, stop, rstart, rstop, partial, release, *buffers):
    kept = [np.asarray(b) for b in buffers]   # a scalar's value, in an array of its own
    pointers = (ctypes.c_void_p * len(kept))(*[b.ctypes.data for b in kept])
    function(pointers, meta, start, stop, rstart, rstop, partial)


def _split_on_workers(function, meta, outer, reduced, split_reduced, pieces, grain, partial, partial_stride, helpers,
                      *buffers):
    """launcher.c's split: the same pieces, claimed through workers.claimed."""
    total = reduced if split_reduced else outer

    def run_piece(k, _):
        lo = total * k // pieces // grain * grain
        hi = total * (k + 1) // pieces // grain * grain if k + 1 < pieces else total
        if hi <= lo:
            return
        if split_reduced:
            _run_through_ctypes(function, meta, 0, outer, lo, hi, partial + k * partial_stride, True, *buffers)
        else:
            _run_through_ctypes(function, meta, lo, hi, 0, reduced, None, True, *buffers)
    workers.claimed(list(range(pieces)), run_piece, tuple, helpers + 1)
