"""The stand-in CUDA driver (tests/standin/): built here, with PyCUDA over
it, for running arrayx's real CUDA runtime (arrayx/_gpu/cuda_runtime.py:
PyCUDA, NVRTC, cuBLAS) on a machine without a GPU.

`prepare()` builds, once per version (cached under
`$ARRAYX_CACHE_DIR/standin`, else `~/.cache/arrayx/standin`):

- `lib64/libcuda.so.1`: the stand-in driver (standin/cuda.c, memory.c,
  work.c), with every other entry point of the CUDA headers returning
  CUDA_ERROR_NOT_SUPPORTED;
- `lib64/libcublas.so.13`: the stand-in cuBLAS (standin/cublas.c);
- PyCUDA itself, from its source distribution on PyPI, linked against the
  stand-in (a PyCUDA is built against one CUDA driver API, and PyPI has no
  wheel of it).

A process started with `environment()` loads them in place of the real
libraries: PyCUDA finds libcuda.so.1 on LD_LIBRARY_PATH and arrayx's cuBLAS
binding finds the stand-in in $CUDA_PATH/lib64. There, `install()` (which
tests/conftest.py calls) limits the binding's search to $CUDA_HOME and
$CUDA_PATH and registers the kernels' host code and the GEMM with them: NVRTC still compiles every kernel to a cubin, and the host library of
the same source (the emulated device's, arrayx/_gpu/emulation) is what a
launch of that cubin runs.
"""

import ctypes
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from pathlib import Path

import numpy as np

from arrayx.renderer import toolchain

SOURCES = Path(__file__).with_name("standin")
# The PyCUDA built (2026.1: the first with CUDA 13's API).
PYCUDA = "2026.1"
# Set in a process that runs on the stand-in: the directory prepare() built.
ENV = "ARRAYX_CUDA_STANDIN"


class Unavailable(Exception):
    """What this machine lacks to build the stand-in (a skip's reason)."""


def cache_root():
    return Path(toolchain.cache_dir("standin"))


def cuda_include():
    """The directory holding the CUDA 13 driver API's headers (cuda.h and
    cudaProfiler.h, which PyCUDA includes): a CUDA toolkit's, or the
    nvidia-cuda-runtime and nvidia-cuda-profiler-api wheels' (the test
    extra installs them)."""
    candidates = [os.path.join(os.environ[v], "include") for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    try:
        import nvidia
        candidates += [os.path.join(root, "cu13", "include") for root in nvidia.__path__]
    except ImportError:
        pass
    candidates += ["/usr/local/cuda/include"] + sorted(glob.glob("/usr/local/cuda-13*/include"), reverse=True)
    for directory in candidates:
        header = Path(directory) / "cuda.h"
        if header.exists() and (Path(directory) / "cudaProfiler.h").exists() and \
                "#define CUDA_VERSION 13" in header.read_text():
            return Path(directory)
    raise Unavailable("no CUDA 13 driver headers (cuda.h and cudaProfiler.h) in $CUDA_HOME, the nvidia wheels "
                      "or /usr/local/cuda; pip install \".[test]\" installs them")


def _tool(name):
    path = shutil.which(name)
    if path is None:
        raise Unavailable(f"no {name} on PATH to build the stand-in CUDA driver and PyCUDA")
    return path


def _run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode:
        raise RuntimeError(f"{' '.join(map(str, command))} failed:\n{result.stdout[-4000:]}{result.stderr[-4000:]}")
    return result


def _driver_names(include):
    """Every entry point the CUDA headers declare, under the names the
    library exports (cuMemAlloc is cuMemAlloc_v2)."""
    names = set()
    for header in ("cuda.h", "cudaProfiler.h"):
        text = (include / header).read_text()
        names |= set(re.findall(r"\bCUDAAPI\s+(cu\w+)\s*\(", text))
        names |= set(re.findall(r"^\s*#\s*define\s+cu\w+\s+(?:__CUDA_API_PT\w+\()?(cu\w+)\)?\s*$", text, re.M))
    return sorted(names)


def _build_libraries(include):
    """lib64/ with the stand-in driver and cuBLAS, under a directory named
    by a hash of their sources, the headers and the compiler."""
    gcc = _tool("gcc")
    version = _run([gcc, "-dumpfullversion"]).stdout
    driver = [SOURCES / name for name in ("cuda.c", "memory.c", "work.c")]
    sources = [*driver, SOURCES / "standin.h", SOURCES / "cublas.c"]
    key = hashlib.sha256("\0".join([*(s.read_text() for s in sources), (include / "cuda.h").read_text(),
                                    version]).encode()).hexdigest()[:16]
    root = cache_root() / f"driver-{key}"
    if (root / "lib64" / "libcublas.so.13").exists():
        return root
    build = Path(tempfile.mkdtemp(prefix="driver-", dir=cache_root()))
    lib = build / "lib64"
    lib.mkdir()
    # The entry points the stand-in lacks return CUDA_ERROR_NOT_SUPPORTED
    # (801); weak, so that its own definitions win.
    unsupported = build / "unsupported.c"
    unsupported.write_text("// Generated from cuda.h: what the stand-in does not implement.\n" + "".join(
        f'__attribute__((weak, visibility("default"))) int {name}(void) {{ return 801; }}\n'
        for name in _driver_names(include)))
    flags = ["-shared", "-fPIC", "-O2", "-Wall", "-fvisibility=hidden", "-I", str(include)]
    _run([gcc, *flags, "-Wl,-soname,libcuda.so.1", "-o", lib / "libcuda.so.1", *driver, unsupported,
          "-ldl", "-lpthread"])
    (lib / "libcuda.so").symlink_to("libcuda.so.1")   # what a linker looks for (-lcuda)
    _run([gcc, *flags, "-Wl,-soname,libcublas.so.13", "-o", lib / "libcublas.so.13", SOURCES / "cublas.c",
          "-L", lib, "-lcuda"])
    _publish(build, root)
    return root


def _publish(build, target):
    """Move a finished build into place; a concurrent build may have won."""
    try:
        build.rename(target)
    except OSError:
        if not target.exists():
            raise
        shutil.rmtree(build, ignore_errors=True)


# PyCUDA's setup.py builds one extension's sources one after another: this
# compiles them in parallel, the largest first (wrap_cudadrv.cpp, half the
# time), then runs setup.py.
_PARALLEL_SETUP = """
import os, sys
from concurrent.futures import ThreadPoolExecutor
import setuptools
from distutils import ccompiler

def parallel_compile(self, sources, output_dir=None, macros=None, include_dirs=None, debug=False, extra_preargs=None,
            extra_postargs=None, depends=None):
    macros, objects, extra_postargs, pp_opts, build = self._setup_compile(
        output_dir, macros, include_dirs, sources, depends, extra_postargs)
    cc_args = self._get_cc_args(pp_opts, debug, extra_preargs)
    order = sorted(objects, key=lambda o: -os.path.getsize(build[o][0]))
    with ThreadPoolExecutor(os.cpu_count()) as pool:
        list(pool.map(lambda o: self._compile(o, build[o][0], build[o][1], cc_args, extra_postargs, pp_opts), order))
    return objects

ccompiler.CCompiler.compile = parallel_compile
sys.argv = ["setup.py"] + sys.argv[1:]
exec(compile(open("setup.py").read(), "setup.py", "exec"))
"""


def _download_pycuda():
    downloads = cache_root() / "downloads"
    sdist = downloads / f"pycuda-{PYCUDA}.tar.gz"
    if sdist.exists():
        return sdist
    result = subprocess.run([sys.executable, "-m", "pip", "download", f"pycuda=={PYCUDA}", "--no-binary", "pycuda",
                             "--no-deps", "--no-build-isolation", "-d", downloads],
                            capture_output=True, text=True)
    if result.returncode or not sdist.exists():
        raise Unavailable(f"pip could not download the PyCUDA {PYCUDA} source distribution:\n{result.stderr[-2000:]}")
    return sdist


def _build_pycuda(include, driver):
    """A directory holding the package `pycuda`, built from its source
    distribution against `driver`'s libcuda (the library it links against
    is the one it loads by name, libcuda.so.1: any driver will do)."""
    _tool("g++")
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        raise Unavailable(f"no Python.h for Python {sys.version.split()[0]} to build PyCUDA against")
    try:
        import setuptools  # noqa: F401
    except ImportError:
        raise Unavailable("setuptools is not installed (pip install \".[test]\" installs it) to build PyCUDA") from None
    site = cache_root() / f"pycuda-{PYCUDA}-{sys.implementation.cache_tag}-numpy{np.__version__.split('.')[0]}"
    if (site / "pycuda" / "driver.py").exists():
        return site
    sdist = _download_pycuda()
    build = Path(tempfile.mkdtemp(prefix="pycuda-", dir=cache_root()))
    with tarfile.open(sdist) as tar:
        # The "data" filter (no links out, no device files) where this Python has it.
        tar.extractall(build, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    source = build / f"pycuda-{PYCUDA}"
    # configure.py's answers. -O0: the build takes a fifth less time, and
    # the stand-in's kernels, not PyCUDA's C++, are what the tests run.
    (source / "siteconf.py").write_text(f"""
BOOST_INC_DIR = []
BOOST_LIB_DIR = []
BOOST_COMPILER = 'gcc43'
USE_SHIPPED_BOOST = True
BOOST_PYTHON_LIBNAME = []
BOOST_THREAD_LIBNAME = []
CUDA_TRACE = False
CUDA_ROOT = {str(include.parent)!r}
CUDA_INC_DIR = [{str(include)!r}]
CUDA_ENABLE_GL = False
CUDA_ENABLE_CURAND = False
CUDADRV_LIB_DIR = [{str(driver / 'lib64')!r}]
CUDADRV_LIBNAME = ['cuda']
CUDART_LIB_DIR = []
CUDART_LIBNAME = []
CURAND_LIB_DIR = []
CURAND_LIBNAME = []
CXXFLAGS = ['-O0', '-g0']
LDFLAGS = []
""")
    output = build / "site"
    _run([sys.executable, "-c", _PARALLEL_SETUP, "build_py", "--build-lib", output, "build_ext", "--build-lib",
          output], cwd=source)
    _publish(output, site)
    shutil.rmtree(build, ignore_errors=True)
    return site


def prepare():
    """(the stand-in's directory, the directory holding PyCUDA); Unavailable
    where this machine cannot build them."""
    include = cuda_include()
    cache_root().mkdir(parents=True, exist_ok=True)
    driver = _build_libraries(include)
    return driver, _build_pycuda(include, driver)


def environment(driver, site):
    """os.environ for a process that runs arrayx's CUDA runtime on the stand-in."""
    env = {k: v for k, v in os.environ.items() if k not in ("ARRAYX_GPU_EMULATION", "ARRAYX_DEVICE")}
    tests = str(Path(__file__).parent)
    env[ENV] = str(driver)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(driver / "lib64"), os.environ.get("LD_LIBRARY_PATH")]))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), tests, str(Path(tests).parent),
                                                      os.environ.get("PYTHONPATH")]))
    # Where arrayx's binding looks for cuBLAS (only there, once install() has run).
    env["CUDA_HOME"] = env["CUDA_PATH"] = str(driver)
    return env


# ---- in the process that runs on the stand-in --------------------------------

_driver = None
_gemm_callback = None   # the ctypes callback: alive as long as the stand-in may call it

_GEMM = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, *[ctypes.c_longlong] * 3,
                         ctypes.c_ulonglong, ctypes.c_longlong, ctypes.c_longlong,
                         ctypes.c_ulonglong, ctypes.c_longlong, ctypes.c_longlong,
                         ctypes.c_ulonglong, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_longlong)


def driver():
    """The stand-in driver loaded in this process (ctypes.CDLL)."""
    global _driver
    if _driver is None:
        _driver = ctypes.CDLL(str(Path(os.environ[ENV]) / "lib64" / "libcuda.so.1"), mode=ctypes.RTLD_GLOBAL)
        _driver.standin_take_violations.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        _driver.standin_register_image.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        _driver.standin_fail_next.argtypes = [ctypes.c_char_p, ctypes.c_int]
        _driver.standin_allocation_count.restype = ctypes.c_size_t
        _driver.cuMemGetAddressRange_v2.argtypes = [ctypes.POINTER(ctypes.c_ulonglong),
                                                    ctypes.POINTER(ctypes.c_size_t), ctypes.c_ulonglong]
    return _driver


def install(blas=True):
    """Make this process's arrayx run its kernels and (with `blas`) its GEMMs
    on the stand-in: each cubin NVRTC compiles gets its source's host library
    registered, and the stand-in cuBLAS computes with the emulated device's
    GEMM."""
    from arrayx._gpu import cublas, nvrtc
    from arrayx._gpu.emulation import host_kernels

    # The binding searches the NVIDIA wheels first, where another package
    # may have installed a real cuBLAS (torch does): here it searches only
    # $CUDA_HOME and $CUDA_PATH, as on a machine whose one cuBLAS is the stand-in.
    cublas._search_dirs = lambda: [os.path.join(os.environ[v], "lib64") for v in ("CUDA_HOME", "CUDA_PATH")
                                   if os.environ.get(v)]
    lib = driver()
    host_kernels._load_grid_walk()   # kernel libraries resolve the grid walk against it
    compile_cubin = nvrtc.compile_cubin

    def compile_and_register(source, arch, name="arrayx.cu"):
        cubin = compile_cubin(source, arch, name)
        lib.standin_register_image(cubin, host_kernels.HostKernels(source).path.encode())
        return cubin

    nvrtc.compile_cubin = compile_and_register
    if blas:
        install_gemm()


def install_gemm():
    """Register the GEMM of the stand-in cuBLAS (the one arrayx's binding loads)."""
    global _gemm_callback
    from arrayx._gpu import cublas
    lib = cublas.library()
    if not hasattr(lib, "standin_cublas_set_gemm"):
        raise RuntimeError(f"arrayx's cuBLAS binding loaded a real cuBLAS ({lib._name}) before install() "
                           f"pointed it at the stand-in in {os.environ['CUDA_PATH']}/lib64")
    _gemm_callback = _GEMM(_gemm)
    lib.standin_cublas_set_gemm(_gemm_callback)


def _gemm(dtype, transa, transb, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc, stride_c, batch):
    from arrayx._gpu.cublas import GemmCall
    from arrayx._gpu.emulation.runtime import gemm
    call = GemmCall(transa, transb, m, n, k, lda, ldb, ldc, stride_a, stride_b, stride_c, batch, 0, 0, 0)
    try:
        # cuBLAS's A is the emulated GEMM's b (cublas.GemmCall).
        gemm(_device_view, b, a, c, [call], dtype.decode())
    except Exception as e:   # a ctypes callback must not raise: the stand-in returns the status
        driver().standin_violation(f"cuBLAS GEMM: {type(e).__name__}: {e}".encode().replace(b"%", b"%%"))
        return 7 if "INVALID_VALUE" in str(e) else 13   # CUBLAS_STATUS_INVALID_VALUE, _EXECUTION_FAILED
    return 0


def _device_view(ptr, shape, dtype, strides):
    """A NumPy array over stand-in device memory (host memory) at `ptr`;
    IndexError where it leaves the allocation `ptr` is in."""
    from arrayx._gpu.emulation.runtime import array_in
    base, size = ctypes.c_ulonglong(), ctypes.c_size_t()
    if driver().cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ptr):
        raise IndexError(f"stand-in cuda: address {ptr:#x} is in no live allocation")
    memory = np.ctypeslib.as_array((ctypes.c_ubyte * size.value).from_address(base.value))
    return array_in(memory, base.value, ptr, shape, dtype, strides)


def take_violations():
    """The stand-in's violations of the driver's rules since the last call:
    (how many, their text)."""
    text = ctypes.create_string_buffer(1 << 16)
    count = driver().standin_take_violations(text, len(text))
    return count, text.value.decode()
