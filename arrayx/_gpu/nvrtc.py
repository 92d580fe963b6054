"""CUDA C++ to cubin with NVRTC, in-process, through ctypes.

NVRTC compiles a kernel in tens of milliseconds where an `nvcc` process takes
half a second, and needs neither a GPU nor a host compiler, so CI compiles
every kernel family arrayx generates. The library comes from the
`nvidia-cuda-nvrtc` wheel (or a CUDA toolkit). Cubins are cached in memory
and on disk (renderer/toolchain.py's cache, kind "cuda"), keyed by the
source, the architecture and NVRTC's version.
"""

import ctypes
import glob
import hashlib
import os
import threading

from ..renderer import toolchain
from ..renderer.toolchain import CompileError  # noqa: F401  (NVRTC's failures are the same error as g++'s)

# --fmad=false: NVRTC would otherwise contract x * y + z into one fused
# multiply-add (one rounding instead of two), so results would differ from
# NumPy's and the CPU executor's, by far more than a rounding where the sum
# cancels (a * b - c * d, the complex products and quotients of renderer/ops.h).
OPTIONS = ("-std=c++17", "--fmad=false")
_lib = None
_lock = threading.Lock()
_cubins = {}


def _candidates():
    try:
        import nvidia
        for root in nvidia.__path__:
            for sub in ("cu13", "cuda_nvrtc"):
                yield from sorted(glob.glob(os.path.join(root, sub, "lib", "libnvrtc.so.*")))
    except ImportError:
        pass
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            yield from sorted(glob.glob(os.path.join(os.environ[var], "lib64", "libnvrtc.so*")))
    yield from sorted(glob.glob("/usr/local/cuda/lib64/libnvrtc.so*"))


def library():
    """The loaded NVRTC library (loaded once); OSError when there is none."""
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        errors = []
        for path in _candidates():
            if ".alt." in path or "builtins" in path:
                continue
            try:
                # libnvrtc dlopens libnvrtc-builtins by soname, which is not on
                # the loader's path in a pip install: load it first, globally.
                for builtins in glob.glob(os.path.join(os.path.dirname(path), "libnvrtc-builtins.so.*")):
                    if ".alt." not in builtins:
                        ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
                lib = ctypes.CDLL(path)
            except OSError as e:   # a broken or foreign copy: try the next
                errors.append(f"{path}: {e}")
                continue
            _declare(lib)
            _lib = lib
            return lib
        raise OSError("NVRTC not found (looked in the nvidia-cuda-nvrtc wheel, $CUDA_HOME, $CUDA_PATH and "
                      "/usr/local/cuda" + ("; failed to load " + "; ".join(errors) if errors else "")
                      + '); pip install "arrayx[gpu]" installs it')


def _declare(lib):
    p, size = ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p
    lib.nvrtcCreateProgram.argtypes = [ctypes.POINTER(p), ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                       ctypes.c_void_p, ctypes.c_void_p]
    lib.nvrtcCompileProgram.argtypes = [p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    for name in ("nvrtcGetCUBINSize", "nvrtcGetProgramLogSize"):
        getattr(lib, name).argtypes = [p, size]
    for name in ("nvrtcGetCUBIN", "nvrtcGetProgramLog"):
        getattr(lib, name).argtypes = [p, ctypes.c_char_p]
    lib.nvrtcDestroyProgram.argtypes = [ctypes.POINTER(p)]
    lib.nvrtcVersion.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]


def version():
    """NVRTC's (major, minor) version."""
    major, minor = ctypes.c_int(), ctypes.c_int()
    library().nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


def compile_cubin(source, arch, name="arrayx.cu"):
    """The cubin of CUDA C++ `source` for `arch` (e.g. "sm_90").

    Raises CompileError with NVRTC's log when the source does not compile.
    """
    options = (f"--gpu-architecture={arch}",) + OPTIONS
    key = hashlib.sha256("\0".join((source, *options, repr(version()))).encode()).hexdigest()
    cubin = _cubins.get(key)
    if cubin is not None:
        return cubin
    path = os.path.join(toolchain.cache_dir("cuda"), key + ".cubin")
    try:
        with open(path, "rb") as f:
            cubin = f.read()
    except OSError:
        cubin = _compile(source, options, name)
        _save(path, cubin)
    _cubins[key] = cubin
    return cubin


def _save(path, data):
    # Write then rename, so a concurrent reader never sees half a cubin; a
    # cache that cannot be written only costs recompiling.
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        pass


def _compile(source, options, name):
    lib = library()
    program = ctypes.c_void_p()
    _check(lib, lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), name.encode(), 0, None, None))
    try:
        args = (ctypes.c_char_p * len(options))(*(o.encode() for o in options))
        status = lib.nvrtcCompileProgram(program, len(options), args)
        if status != 0:
            size = ctypes.c_size_t()
            lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
            log = ctypes.create_string_buffer(size.value)
            lib.nvrtcGetProgramLog(program, log)
            raise CompileError(f"NVRTC could not compile generated CUDA ({_error(lib, status)}):\n"
                               f"{log.value.decode(errors='replace')}")
        size = ctypes.c_size_t()
        _check(lib, lib.nvrtcGetCUBINSize(program, ctypes.byref(size)))
        cubin = ctypes.create_string_buffer(size.value)
        _check(lib, lib.nvrtcGetCUBIN(program, cubin))
        return cubin.raw
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(program))


def _error(lib, status):
    return lib.nvrtcGetErrorString(status).decode()


def _check(lib, status):
    if status != 0:
        raise CompileError(f"NVRTC: {_error(lib, status)}")
