"""Calling a native kernel over NumPy buffers.

Through the launcher (launcher.c), a CPython extension built once per Python
and kept in the disk cache, a call costs about a quarter of a microsecond;
through ctypes, where the launcher cannot be built (no Python headers), a
few microseconds. Both pass the kernel the buffers' data pointers (a NumPy
scalar's: the address of its value) and release the GIL when asked to.
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
    """Whether the launcher finds every dtype's array data and scalar value where NumPy says they are."""
    for code in "?bhilqBHILQefdFD":
        array = np.arange(3).astype(code)
        scalar = array[1]
        if module.address(array) != array.ctypes.data:
            return False
        if ctypes.string_at(module.address(scalar), array.itemsize) != scalar.tobytes():
            return False
    return True


@functools.cache
def runner():
    """(the function calling a kernel, what names the kernel to it as a
    function of a compiler.Kernel, the function running a kernel's pieces
    on the launcher's threads or None). The first is run(kernel, meta
    address, start, stop, rstart, rstop, partial address or None, release,
    *buffers): the kernel over [start, stop) (and reduced points [rstart,
    rstop)) of `buffers` (NumPy arrays and scalars), without the GIL with
    `release`. The launcher's run takes the kernel's address; the ctypes
    one, where there is no launcher, its ctypes function. The last is the
    launcher's split (launcher.c); without a launcher, a call's pieces run
    on the CPU executor's Python workers."""
    module = launcher()
    if module is not None:
        return module.run, _address, module.split
    return _run_through_ctypes, _function, None


def _address(kernel):
    return kernel.address


def _function(kernel):
    return kernel.function


def _run_through_ctypes(function, meta, start, stop, rstart, rstop, partial, release, *buffers):
    kept = [np.asarray(b) for b in buffers]   # a scalar's value, in an array of its own
    pointers = (ctypes.c_void_p * len(kept))(*[b.ctypes.data for b in kept])
    function(pointers, meta, start, stop, rstart, rstop, partial)
