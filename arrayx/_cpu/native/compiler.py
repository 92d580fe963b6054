"""Compiling native kernels: g++ at run time, off the calling thread, kept
in memory and on disk.

The compiler is the system's g++ ($CXX where set): every machine that
builds NumPy-based packages has one, it compiles a kernel in 70-250 ms of a core, and
glibc's vector math library links with it. A kernel library is kept on disk
(renderer/toolchain.py) under a hash of its source, the headers, the flags,
the compiler's version and this CPU's features (kernels are built with
-march=native), so another process on the machine compiles nothing; the disk
cache is bounded by DISK_BYTES, the least recently used libraries going
first. A missing compiler or a failed compile or load is logged once (logger
"arrayx.native") and the group runs on NumPy; only `wait=True` (the forced
native path) raises.

Flags that change results are off: no -ffast-math, and -ffp-contract=off (no
fused multiply-adds, which NumPy does not do); -fno-math-errno and
-fno-trapping-math only drop errno and floating-point exception flags, which
arrayx ignores, so that math calls and selects vectorize. Loops are not
unswitched: a loop whose points test a scalar operand (a divisor's zero,
a shift's range) would be compiled, and vectorized, once per outcome, for
selects that cost nothing beside the division or shift.
"""

import _ctypes
import ctypes
import functools
import logging
import os
import platform
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor

from ...renderer import toolchain
from ...renderer.cstyle import OPS_HEADER
from .codegen import ENTRY
from .points import HOST_HEADER

KIND = "native"
FLAGS = ("-O3", "-march=native", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off",
         "-fno-unswitch-loops", "-fno-exceptions", "-fno-rtti", "-fPIC", "-shared", "-nodefaultlibs", "-w")
# The libraries every kernel links, named (-nodefaultlibs): g++ would add
# libstdc++, which no kernel uses and whose symbols take the linker half of
# a kernel's link. Nor is libc named: the process that loads a kernel has
# it loaded already, and reading its symbols took half of what remained.
RUNTIME = ("-lm", "-lgcc")
# Compiles running at once, off the calling threads: on a small machine a
# compile takes a core from the work it speeds up.
CONCURRENT_COMPILES = 1
# Compiles waiting at most; a group asked for beyond that runs on NumPy and
# asks again at its next call.
QUEUED_COMPILES = 64
# Kernels kept loaded by source, besides those plans hold.
LOADED = 2048
# Bytes of kernel libraries the disk cache keeps.
DISK_BYTES = 256 << 20

logger = logging.getLogger("arrayx.native")

_headers = (HOST_HEADER.read_text(), OPS_HEADER.read_text())
_loaded = {}       # source -> Kernel
_pending = set()   # sources queued or compiling
_failed = {}       # source -> why it has no kernel
_unscanned = None  # bytes this process has added to the disk cache since it last scanned it (None: never)
_lock = threading.Lock()
_pool = None
counts = {"compiled": 0, "disk_hits": 0, "compile_seconds": 0.0}


class Kernel:
    """A kernel library, loaded: `address` is its entry point, `function`
    the same entry called through ctypes."""

    __slots__ = ("path", "address", "function", "_library")

    def __init__(self, path):
        library = ctypes.CDLL(path)
        # Unloaded once the kernel is dropped: ctypes never dlcloses.
        weakref.finalize(library, _ctypes.dlclose, library._handle)
        function = getattr(library, ENTRY)
        function.argtypes = [ctypes.c_void_p, ctypes.c_void_p] + [ctypes.c_longlong] * 4 + [ctypes.c_void_p]
        function.restype = None
        self.path = path
        self.function = function
        self.address = ctypes.cast(function, ctypes.c_void_p).value
        self._library = library


@functools.cache
def cpu_features():
    """What this CPU can run (code built for -march=native depends on it)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return line
    except OSError:
        pass
    return platform.processor() or platform.machine()


@functools.cache
def libmvec():
    """Whether glibc's vector math library links (then math calls vectorize)."""
    probe = ('#include "host.h"\nextern "C" void ax_probe(float* x, int n) '
             '{ for (int i = 0; i < n; i++) x[i] = exp(x[i]); }\n')
    try:
        _build(probe, ("-DAX_LIBMVEC",), ("-lmvec",))
    except (toolchain.CompileError, OSError):
        return False
    return True


@functools.cache
def stream_bytes():
    """The bytes of output from which an elementwise group runs in a
    streamed form (codegen.py, host.h): this machine's last-level cache
    (the largest cache of its first CPU, as Linux's sysfs says), where the
    CPU has 64-byte streaming stores; else None (never)."""
    if " avx512f " not in f" {cpu_features()} ":
        return None
    sizes = {}
    root = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in os.scandir(root):
            if entry.name.startswith("index"):
                with open(os.path.join(entry.path, "level")) as level, open(os.path.join(entry.path, "size")) as size:
                    text = size.read().strip()
                    sizes[int(level.read())] = int(text[:-1]) << {"K": 10, "M": 20, "G": 30}[text[-1]]
    except (OSError, ValueError, KeyError):
        return None
    return sizes[max(sizes)] if sizes else None


def flags():
    """The flags kernels are compiled with here."""
    return FLAGS + (("-DAX_LIBMVEC",) if libmvec() else ())


def available():
    """None when kernels can be compiled here, else why not."""
    if toolchain.compiler() is None:
        return "no C++ compiler (g++, or $CXX) on the PATH"
    return None


def _build(text, extra_flags=(), libraries=()):
    """(the path of the library of C++ `text` (after the headers), whether
    it was built now rather than found in the disk cache)."""
    source = '#include "host.h"\n#include "ops.h"\n' + text
    libraries = tuple(libraries) + RUNTIME
    all_flags = FLAGS + tuple(extra_flags) + ("-I", str(HOST_HEADER.parent), "-I", str(OPS_HEADER.parent))
    path = toolchain.library_path(source, KIND, FLAGS + tuple(extra_flags) + tuple(libraries), _headers,
                                  (cpu_features(),))
    try:
        os.utime(path)   # recently used: the last the disk bound drops
        return path, False
    except FileNotFoundError:
        pass   # not built yet, or just dropped by another process's disk bound
    toolchain.build(source, path, all_flags, libraries=libraries)
    _bound_disk(os.path.dirname(path), os.path.getsize(path))
    return path, True


def _bound_disk(directory, added):
    """Drop the least recently used libraries while the cache holds more
    than DISK_BYTES, `added` bytes having just been written there. A scan
    stats every library (90 ms for a full cache, more than most compiles),
    so it runs at a process's first build and then once per DISK_BYTES / 16
    bytes it has added."""
    global _unscanned
    if _unscanned is not None and _unscanned + added <= DISK_BYTES // 16:
        _unscanned += added
        return
    _unscanned = 0
    entries = []
    for entry in os.scandir(directory):
        if entry.name.endswith(".so"):
            stat = entry.stat()
            entries.append((stat.st_mtime, stat.st_size, entry.path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= DISK_BYTES:
            break
        try:
            os.remove(path)
        except OSError:
            continue
        total -= size


def _load(text):
    libraries = ("-lmvec",) if libmvec() else ()
    for _ in range(2):
        start = time.perf_counter()
        path, built = _build(text, flags()[len(FLAGS):], libraries)
        try:
            found = Kernel(path)
        except OSError:
            # Found on disk, then dropped by another process's disk bound
            # before it loaded: built again.
            if built or os.path.exists(path):
                raise
            continue
        if built:
            counts["compiled"] += 1
            counts["compile_seconds"] += time.perf_counter() - start
        else:
            counts["disk_hits"] += 1
        return found
    raise OSError(f"{path}: dropped from the disk cache twice as it was loaded")


def kernel(text, wait=False):
    """The loaded Kernel of kernel source `text`. In memory or on disk, at
    once. Otherwise it is compiled: with `wait`, on the calling thread (a
    failure raises); else in the background, and None is returned now (a
    later call finds it). None as well when it cannot be built here (logged
    once)."""
    found = _loaded.get(text)
    if found is not None:
        return found
    if not wait and text in _pending:
        return None   # compiling: asked again at every call until then
    why = available()
    if why is not None:
        if wait:
            raise RuntimeError(f"native CPU kernels: {why}")
        _log_once("compiler", f"native CPU kernels are off: {why}; fused groups run on NumPy")
        return None
    if text in _failed:
        if wait:
            raise RuntimeError(f"native CPU kernels: {_failed[text]}")
        return None
    if wait:
        return _compile(text, raise_errors=True)
    with _lock:
        if text in _pending or len(_pending) >= QUEUED_COMPILES:
            return None
        _pending.add(text)
    _compile_pool().submit(_compile_queued, text)
    return None


def _compile_queued(text):
    try:
        _compile(text, raise_errors=False)
    finally:
        with _lock:
            _pending.discard(text)


def _compile(text, raise_errors):
    try:
        found = _load(text)
    except (toolchain.CompileError, OSError) as error:
        why = f"a kernel failed to build or load: {error}"
        _failed[text] = why
        if raise_errors:
            raise RuntimeError(f"native CPU kernels: {why}") from None
        _log_once(text, f"native CPU kernels: {why.splitlines()[0]} (its group runs on NumPy)")
        return None
    if len(_loaded) >= LOADED:
        _loaded.clear()
    _loaded[text] = found
    return found


_logged = set()


def _log_once(key, message):
    if key not in _logged:
        _logged.add(key)
        logger.warning(message)


def _compile_pool():
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=CONCURRENT_COMPILES, thread_name_prefix="arrayx-compile")
    return _pool


def wait_for_compiles():
    """Block until the compiles queued so far have finished (tests and benchmarks)."""
    pool = _pool
    if pool is not None:
        pool.submit(lambda: None).result()


def _forget_pool():
    # A forked child has none of the parent's threads.
    global _pool, _lock
    _pool, _lock = None, threading.Lock()
    _pending.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)
