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
    flags = ("-O2", "-shared", "-fPIC", "-I", include)
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    path = toolchain.library_path(source, "launcher", flags[:3], extra=(sys.version,), suffix=suffix)
    try:
        if not Path(path).exists():
            toolchain.build(source, path, flags, language="c")
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


def run(kernel, meta, start, stop, rstart, rstop, partial, release, buffers):
    """Run `kernel` (a compiler.Kernel) over [start, stop) (and reduced
    points [rstart, rstop)) of `buffers` (NumPy arrays and scalars), with
    `meta` (the address of its extents and strides) and `partial` (the
    address partial results go to, or None)."""
    module = launcher()
    if module is not None:
        module.run(kernel.address, meta, start, stop, rstart, rstop, partial, release, *buffers)
        return
    kept = [np.asarray(b) for b in buffers]   # a scalar's value, in an array of its own
    pointers = (ctypes.c_void_p * len(kept))(*[b.ctypes.data for b in kept])
    kernel.function(pointers, meta, start, stop, rstart, rstop, partial)
