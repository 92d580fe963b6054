"""The host C/C++ compiler and the disk cache of what it builds.

Generated code becomes a shared library once per machine: a library is kept
under a name hashed from everything its code depends on (the source, the
headers it includes, the flags, the compiler's version, and whatever else a
caller names, such as the CPU's features for code built for it), so a second
process, or a second run, compiles nothing. The cache lives in
`$ARRAYX_CACHE_DIR/<kind>`, else `$XDG_CACHE_HOME/arrayx/<kind>`
(`~/.cache/arrayx/<kind>`). The GPU's emulated device and the CPU's native
kernels build through here.
"""

import functools
import hashlib
import os
import shutil
import subprocess
import threading


class CompileError(RuntimeError):
    """Generated code did not compile (g++, or NVRTC for a GPU); the message
    holds the compiler's output."""


def compiler(name="g++"):
    """The path of the host compiler: $CXX when it is set, else `name` on
    the PATH; None when there is none."""
    return _found(os.environ.get("CXX") or name, os.environ.get("PATH", os.defpath))


@functools.cache
def _found(name, path):
    # A search of the PATH takes tens of microseconds: a group that asks for
    # its kernel at every call until it is compiled must not pay it.
    return shutil.which(name, path=path)


@functools.cache
def compiler_version(path):
    """What the compiler at `path` says its version is."""
    return subprocess.run([path, "--version"], check=True, capture_output=True, text=True).stdout


def cache_dir(kind):
    """Where libraries of `kind` are kept."""
    if os.environ.get("ARRAYX_CACHE_DIR"):
        return os.path.join(os.environ["ARRAYX_CACHE_DIR"], kind)
    cache_home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache_home, "arrayx", kind)


def library_path(source, kind, flags, headers=(), extra=(), suffix=".so"):
    """Where the library built from `source` with `flags` is kept: the name
    hashes the source, the texts of the headers it includes (`headers`), the
    flags, the compiler's version and the strings in `extra`."""
    parts = [source, *headers, *flags, compiler_version(compiler()), *extra]
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]
    return os.path.join(cache_dir(kind), key + suffix)


def build(source, path, flags, language="c++", libraries=()):
    """Compile `source` into the shared library `path` (with `flags`, then
    linked against `libraries`); a CompileError with the compiler's output
    when it fails. Built under a name of its own, then renamed: a concurrent
    process never loads half a library."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}"
    extension = ".cpp" if language == "c++" else ".c"
    with open(tmp + extension, "w") as f:
        f.write(source)
    try:
        subprocess.run([compiler(), "-x", language, *flags, "-o", tmp, tmp + extension, *libraries],
                       check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as e:
        raise CompileError(f"{os.path.basename(compiler())} could not compile generated code:\n{e.stderr}") from None
    finally:
        os.remove(tmp + extension)
    os.replace(tmp, path)
    return path
