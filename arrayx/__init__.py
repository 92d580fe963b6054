"""arrayx: the Python array API standard (2025.12) over lazy expression graphs.

`import arrayx as xp`. Every function records a node in a graph; values are
computed at a force point (`bool()`, `float()`, `repr()`, `np.asarray()`, ...)
or by `xp.eval(*arrays)`, by the executor of the arrays' device.
"""

import builtins as _builtins
import math as _math
import numbers as _numbers
import sys as _sys

from . import executors
from ._cpu import CPUExecutor as _CPUExecutor, set_threads as _set_cpu_threads, threads as _cpu_threads
from ._dask import register_device as _register_dask_device
from ._gpu import register_devices as _register_gpu_devices
from .dtypes import (bool, complex64, complex128, float16, float32, float64, int8, int16, int32, int64,  # noqa: F401
                     uint8, uint16, uint32, uint64)
from .device import CPU as _CPU, Device
from .namespace.array_object import Array, set_lazy_repr
from .namespace.build import set_eager
from .namespace.creation import (arange, asarray, empty, empty_like, eye, from_dlpack, full, full_like,
                                 linspace, meshgrid, ones, ones_like, tril, triu, zeros, zeros_like)
from .namespace.data_types import astype, can_cast, finfo, iinfo, isdtype, result_type
from .namespace.elementwise import (abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and,
                                    bitwise_invert, bitwise_left_shift, bitwise_or, bitwise_right_shift,
                                    bitwise_xor, ceil, clip, conj, copysign, cos, cosh, divide, equal, exp,
                                    expm1, floor, floor_divide, greater, greater_equal, hypot, imag, isfinite,
                                    isinf, isnan, less, less_equal, log, log1p, log2, log10, logaddexp,
                                    logical_and, logical_not, logical_or, logical_xor, maximum, minimum,
                                    multiply, negative, nextafter, not_equal, positive, pow, real, reciprocal,
                                    remainder, round, sign, signbit, sin, sinh, sqrt, square, subtract, tan,
                                    tanh, trunc, where)
from .namespace.inspection import __array_namespace_info__
from .namespace.linear_algebra import matmul, matrix_transpose, tensordot, vecdot
from .namespace.manipulation import (broadcast_arrays, broadcast_shapes, broadcast_to, concat, expand_dims,
                                     flip, moveaxis, permute_dims, repeat, reshape, roll, squeeze, stack, tile,
                                     unstack)
from .namespace.statistical import cumulative_prod, cumulative_sum, max, mean, min, prod, std, sum, var
from .namespace.utility import all, any, diff
from .namespace.indexing import *  # noqa: F401,F403  (take, take_along_axis)
from .namespace.searching import *  # noqa: F401,F403
from .namespace.sorting import *  # noqa: F401,F403
from .namespace.sets import *  # noqa: F401,F403
from . import debug, fft, linalg  # noqa: F401  (the standard's extensions are submodules)
from . import dask  # noqa: F401  (from_dask, to_dask; imports no dask)
from .transformers.jit import jit  # noqa: F401
from .namespace.operators import install as _install_array_methods
from .namespace.build import check_device as _check_device, node_of as _node_of
from .scheduler.schedule import evaluate as _evaluate

# Executors register here, in the package that knows them all: the registry
# imports none of them.
executors.register(_CPU, _CPUExecutor())
executors.register_on_first_use(_register_gpu_devices)
_register_dask_device(executors.register)
executors.default_device_from_environment()
# Here too, once both exist: the Array methods written with namespace functions.
_install_array_methods(_sys.modules[__name__])

__version__ = "0.1.0"
__array_api_version__ = "2025.12"

e = _math.e
inf = _math.inf
nan = _math.nan
pi = _math.pi
newaxis = None


def eval(*arrays):
    """Computes several arrays at once: one plan computes all of them, and
    their device holds the values (the dask device persists them).

    Parameters
    ----------
    *arrays : Array
        The arrays to compute.

    Returns
    -------
    out : Array or tuple of Array
        The arrays given (one array when one was given), now computed.

    Raises
    ------
    TypeError
        If an argument is not an arrayx array.
    Exception
        Any value-dependent error of the recorded work (e.g.
        numpy.linalg.LinAlgError), naming the function that recorded it.
    """
    _evaluate([_node_of(a, "eval", f"arrays[{i}]") for i, a in enumerate(arrays)])
    return arrays[0] if len(arrays) == 1 else arrays


def graph(x, format="text", *, lowered=False):
    """Returns the unevaluated graph below `x` (computes nothing).

    Parameters
    ----------
    x : Array
        The array whose graph to show.
    format : str
        "text": one node a line. "dot": Graphviz DOT, fused groups as
        clusters, realized leaves filled. "svg": the DOT rendered by
        Graphviz (needs `pip install "arrayx[viz]"` and Graphviz's `dot` on
        PATH).
    lowered : bool
        False: a call of a function that lowers to several primitives
        (`linspace`, `mean`, `linalg.vector_norm`, ...) shows as one node, as
        it was written. True: every primitive shows.

    Returns
    -------
    out : str
        The graph in `format`.

    Raises
    ------
    TypeError
        If `x` is not an arrayx array.
    ValueError
        If `format` is not one of the above.
    ImportError
        For "svg", when the graphviz package is missing.
    RuntimeError
        For "svg", when Graphviz's `dot` program is not on PATH.
    """
    node = _node_of(x, "graph")
    if format not in debug.FORMATS:
        raise ValueError(f"graph: format must be one of {', '.join(map(repr, debug.FORMATS))}, got {format!r}")
    view = {"text": debug.describe, "dot": debug.dot, "svg": debug.svg}[format]
    return view([node], lowered)


def set_default_device(device):
    """Makes `device` the device arrays are created on when none is given;
    the environment variable ARRAYX_DEVICE sets it for a whole process.

    Parameters
    ----------
    device : Device or str
        A registered device, or its name (e.g. "cpu", "cuda:0", "dask").

    Raises
    ------
    ValueError
        If no such device is registered here (the message says why, e.g.
        PyCUDA missing or no GPU found).
    """
    executors.set_default_device(_check_device(device, "set_default_device"))


def set_num_threads(n):
    """Runs the CPU executor's fused kernels on `n` threads from the next
    force point on. The default is one per core this process may run on;
    the environment variable ARRAYX_NUM_THREADS sets it for a whole process.
    BLAS (matmul, linalg) keeps its own setting (OPENBLAS_NUM_THREADS,
    OMP_NUM_THREADS).

    Parameters
    ----------
    n : int
        The number of threads, at least 1.

    Raises
    ------
    TypeError
        If `n` is not an int.
    ValueError
        If `n` is less than 1.
    """
    if isinstance(n, _builtins.bool) or not isinstance(n, _numbers.Integral):
        raise TypeError(f"set_num_threads: n must be a positive int, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"set_num_threads: n must be a positive int, got {n}")
    _set_cpu_threads(int(n))


def get_num_threads():
    """Returns the number of threads the CPU executor's fused kernels run on.

    Returns
    -------
    out : int
        The thread count `set_num_threads` or ARRAYX_NUM_THREADS set, else
        one per core this process may run on.
    """
    return _cpu_threads()


# `from arrayx import *`: the standard's names (the namespace, its constants,
# dtypes and extensions), then arrayx's own.
__all__ = [
    "abs", "acos", "acosh", "add", "all", "any", "arange", "argmax", "argmin", "argsort", "asarray", "asin",
    "asinh", "astype", "atan", "atan2", "atanh", "bitwise_and", "bitwise_invert", "bitwise_left_shift",
    "bitwise_or", "bitwise_right_shift", "bitwise_xor", "bool", "broadcast_arrays", "broadcast_shapes",
    "broadcast_to", "can_cast", "ceil", "clip", "complex128", "complex64", "concat", "conj", "copysign",
    "cos", "cosh", "count_nonzero", "cumulative_prod", "cumulative_sum", "Device", "diff", "divide", "e",
    "empty", "empty_like", "equal", "exp", "expand_dims", "expm1", "eye", "fft", "finfo", "flip", "float32",
    "float64", "floor", "floor_divide", "from_dlpack", "full", "full_like", "greater", "greater_equal",
    "hypot", "iinfo", "imag", "inf", "int16", "int32", "int64", "int8", "isdtype", "isfinite", "isin",
    "isinf", "isnan", "less", "less_equal", "linalg", "linspace", "log", "log10", "log1p", "log2",
    "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor", "matmul", "matrix_transpose",
    "max", "maximum", "mean", "meshgrid", "min", "minimum", "moveaxis", "multiply", "nan", "negative",
    "newaxis", "nextafter", "nonzero", "not_equal", "ones", "ones_like", "permute_dims", "pi", "positive",
    "pow", "prod", "real", "reciprocal", "remainder", "repeat", "reshape", "result_type", "roll", "round",
    "searchsorted", "sign", "signbit", "sin", "sinh", "sort", "sqrt", "square", "squeeze", "stack", "std",
    "subtract", "sum", "take", "take_along_axis", "tan", "tanh", "tensordot", "tile", "tril", "triu", "trunc",
    "uint16", "uint32", "uint64", "uint8", "unique_all", "unique_counts", "unique_inverse", "unique_values",
    "unstack", "var", "vecdot", "where", "zeros", "zeros_like", "__array_api_version__",
    "__array_namespace_info__", "__version__",
    "Array", "float16", "eval", "graph", "jit", "set_default_device", "set_num_threads", "get_num_threads",
    "set_lazy_repr", "set_eager", "debug", "dask",
]
