"""Generated CUDA compiled for the host: g++ and host.h.

A translation unit of generated kernels (codegen.module_source) becomes a
shared library with one launcher per kernel, `launch_<name>(gx, gy, bx,
void** args)`, which runs the kernel over the grid through launch.cpp's grid
walk (a library of its own, loaded once, globally, so that kernel libraries
resolve against it). `args` holds the address of each parameter's value, as
cuLaunchKernel's kernelParams do, and `ax_params_<name>` spells the
parameters' kinds, one letter each ("p" an address, "i" an int, "l" a long
long): one calling convention for every kernel, so that a caller without
per-kernel code (the tests' stand-in CUDA driver) launches them too.
Libraries are cached on disk (renderer/toolchain.py, kind "host"), keyed by
a hash of the source, the header, the flags and the compiler's version, so a
second process compiles nothing.
"""

import _ctypes
import ctypes
import os
import re
import threading
import weakref
from pathlib import Path

from ...renderer import toolchain

HEADER = Path(__file__).with_name("host.h")
GRID_SOURCE = Path(__file__).with_name("launch.cpp")
FLAGS = ("-std=c++20", "-O1", "-shared", "-fPIC", "-fno-fast-math")
_KERNEL = re.compile(r'extern "C" __global__ void (\w+)\((.*?)\)\n')
_lock = threading.Lock()
_grid_walk = None


def compiler():
    """The host C++ compiler, or None (see renderer/toolchain.py)."""
    return toolchain.compiler()


def cache_dir():
    """Where compiled host libraries are kept."""
    return toolchain.cache_dir("host")


def _library(source):
    """The path of the shared library built from C++ `source` (once: cached on disk)."""
    path = toolchain.library_path(source, "host", FLAGS, (HEADER.read_text(),))
    if not os.path.exists(path):
        toolchain.build(source, path, FLAGS + ("-I", str(HEADER.parent)))
    return path


def _load_grid_walk():
    global _grid_walk
    with _lock:
        if _grid_walk is None:
            _grid_walk = ctypes.CDLL(_library(GRID_SOURCE.read_text()), mode=ctypes.RTLD_GLOBAL)


class HostKernels:
    """The kernels of CUDA C++ `source`, compiled for the host."""

    def __init__(self, source):
        launchers = []
        self.params = {}
        matches = list(_KERNEL.finditer(source))
        ends = [m.start() for m in matches[1:]] + [len(source)]
        for match, end in zip(matches, ends):
            name, params = match.groups()
            params = tuple(params.split(", "))
            values = ", ".join(f"*({_ctype_name(p)}*)args[{i}]" for i, p in enumerate(params))
            synchronizes = "__syncthreads" in source[match.start():end]
            launchers.append(f'extern "C" const char ax_params_{name}[] = "{"".join(map(_kind, params))}";\n'
                             f'extern "C" int launch_{name}(unsigned gx, unsigned gy, unsigned bx, void** args) '
                             f'{{ return ax_launch(gx, gy, bx, {str(synchronizes).lower()}, '
                             f'[&] {{ {name}({values}); }}); }}')
            self.params[name] = params
        self.path = _library('#include "host.h"\n' + source + "\n" + "\n".join(launchers))

    def load(self):
        """{name: HostKernel} for every kernel of the library."""
        _load_grid_walk()
        library = ctypes.CDLL(self.path)
        # Unloaded when its last kernel is dropped (ctypes never dlcloses;
        # each kernel's function pointer holds the library).
        weakref.finalize(library, _ctypes.dlclose, library._handle)
        return {name: HostKernel(getattr(library, f"launch_{name}"), params) for name, params in self.params.items()}


class HostKernel:
    """One kernel of a host library; `pointers` says which parameters are
    addresses."""

    def __init__(self, launcher, params):
        launcher.argtypes = [ctypes.c_uint] * 3 + [ctypes.POINTER(ctypes.c_void_p)]
        launcher.restype = ctypes.c_int
        self.launcher = launcher
        self.types = tuple(_CTYPES[_kind(p)] for p in params)
        self.pointers = tuple(_kind(p) == "p" for p in params)

    def __call__(self, grid, block, args):
        """Run the kernel over `grid` (x, y) blocks of `block` threads, on
        `args` (ints: addresses, sizes, strides)."""
        values = [t(int(a)) for t, a in zip(self.types, args)]
        addresses = (ctypes.c_void_p * max(1, len(values)))(*[ctypes.addressof(v) for v in values])
        if self.launcher(grid[0], grid[1], block, addresses):
            raise RuntimeError("emulated cuda: the threads of a block did not all reach the same __syncthreads()")


_CTYPES = {"p": ctypes.c_void_p, "i": ctypes.c_int, "l": ctypes.c_longlong}


def _kind(param):
    """The kind of a kernel parameter: "p" an address, "i" an int, "l" a long long."""
    if "*" in param:
        return "p"
    if param.startswith("int "):
        return "i"
    if param.startswith("long long "):
        return "l"
    raise ValueError(f"no host type for kernel parameter {param!r}")


def _ctype_name(param):
    """The C++ type of a kernel parameter, without its name and __restrict__."""
    *words, name = param.split()
    stars = "*" * (len(name) - len(name.lstrip("*")))   # "float *out"
    return " ".join(word for word in words if word != "__restrict__") + stars
