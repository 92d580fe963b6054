"""The array API standard's FFT extension (`xp.fft`).

Every transform checks its arguments at the call and records one node of an
FFT primitive (see graph/primitives.py). The primitives take the transform
lengths and crop or zero-pad the input themselves, so a 1-D transform is the
n-D primitive over one axis: `fft(x, n=n, axis=a)` is `fftn` over axes (a,)
with sizes (n,). hfft and ihfft have one-axis primitives of their own.

fftfreq and rfftfreq are composites of an index grid (`iota`) and scalars;
fftshift and ifftshift are composites of `roll`.

Input dtypes follow the standard (2023.12 made them requirements): fft, ifft,
fftn, ifftn, irfft, irfftn and hfft take complex floating arrays; rfft, rfftn
and ihfft take real floating arrays. Any other dtype is a TypeError at the
call rather than a silent cast, because a cast would change the precision or
kind of the result the standard defines in terms of the input's dtype.
"""

import numbers
from collections.abc import Sequence

from . import dtypes as dt
from .namespace.array_object import Array
from .namespace.build import (P, astype_node, check_device, check_dtype, check_size, composite, integer_argument, make,
                              node_of, normalize_axis, scalar_node, wrap)
from .namespace.creation import check_dtype_arg, iota
from .namespace.hints import DType, DeviceLike
from .namespace.manipulation import roll

__all__ = [
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

_NORMS = ("backward", "ortho", "forward")


def _check_norm(norm, name):
    # isinstance first: `in` would call == on an array argument, a force point.
    if not isinstance(norm, str) or norm not in _NORMS:
        raise ValueError(f"{name}: norm must be 'backward', 'ortho' or 'forward', got {norm!r}")
    return norm


def _ints(values, name, argname):
    """A sequence-of-ints argument (s, axes) as a tuple of ints."""
    # An array is refused too: iterating it would be a force point per element.
    if isinstance(values, (str, bytes, Array)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name}: {argname} must be a sequence of integers, got {type(values).__name__}")
    return tuple(integer_argument(v, name, f"{argname}[{i}]", refuse_bool=True) for i, v in enumerate(values))


def _axes(axes, ndim, name):
    """Explicit axes, normalized and in the caller's order (the last one is special for rfftn/irfftn)."""
    axes = tuple(normalize_axis(a, ndim, name) for a in _ints(axes, name, "axes"))
    if len(set(axes)) != len(axes):
        # The standard leaves repeated axes unspecified; transforming an axis twice is almost surely a bug.
        raise ValueError(f"{name}: axes {axes} name the same axis more than once")
    return axes


# One-dimensional transforms

def _one_axis(name, x, n, axis, norm, accepts, inverse_real=False):
    """(node, axis, n, norm) of a 1-D transform, checked for `name`.

    n is the transform length: for irfft and hfft (`inverse_real`) the length
    of the real output, 2*(M-1) by default; for the others the number of input
    points used, M by default.
    """
    node = node_of(x, name)
    check_dtype(node, accepts, name)  # the standard's category, before the cast to the primitive's
    axis = normalize_axis(axis, len(node.shape), name)
    norm = _check_norm(norm, name)
    m = node.shape[axis]
    if n is None:
        n = 2 * (m - 1) if inverse_real else m
        if n < 1:
            raise ValueError(f"{name}: axis {axis} of x has size {m}, so the default n is {n}; "
                             "pass n >= 1 to set the transform length")
    else:
        n = integer_argument(n, name, "n", refuse_bool=True)
        if n < 1:
            raise ValueError(f"{name}: n must be at least 1, got {n}")
    return node, axis, n, norm


def _transform_1d(name, prim, x, n, axis, norm, accepts, inverse_real=False):
    node, axis, n, norm = _one_axis(name, x, n, axis, norm, accepts, inverse_real)
    return wrap(make(P[prim], (node,), ((axis,), (n,), norm)))


def fft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Computes the one-dimensional discrete Fourier transform.

    Parameters
    ----------
    x : Array
        Input array; must have a complex floating-point data type.
    n : int | None
        Number of points of x along axis to transform: x is trimmed or
        zero-padded to n; None: the size M of that axis. Default: None.
    axis : int
        Axis over which to compute the transform (negative counts from the
        last). Default: -1.
    norm : str
        Normalization: 'backward' (none), 'ortho' (1/sqrt(n)) or 'forward'
        (1/n). Default: 'backward'.

    Returns
    -------
    out : Array
        The transform, of x's dtype and shape, except that axis has size n.

    Raises
    ------
    TypeError
        x not an array or not complex floating-point, or n not an integer.
    ValueError
        n < 1 (or an empty axis with n None), an axis out of bounds, or
        another norm.
    """
    return _transform_1d("fft", "fftn", x, n, axis, norm, "complex floating")


def ifft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Computes the one-dimensional inverse discrete Fourier transform.

    Parameters
    ----------
    x : Array
        Input array; must have a complex floating-point data type.
    n : int | None
        Number of points of x along axis to transform: x is trimmed or
        zero-padded to n; None: the size M of that axis. Default: None.
    axis : int
        Axis over which to compute the transform (negative counts from the
        last). Default: -1.
    norm : str
        Normalization: 'backward' (1/n), 'ortho' (1/sqrt(n)) or 'forward'
        (none). Default: 'backward'.

    Returns
    -------
    out : Array
        The transform, of x's dtype and shape, except that axis has size n.

    Raises
    ------
    TypeError
        x not an array or not complex floating-point, or n not an integer.
    ValueError
        n < 1 (or an empty axis with n None), an axis out of bounds, or
        another norm.
    """
    return _transform_1d("ifft", "ifftn", x, n, axis, norm, "complex floating")


def rfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Computes the one-dimensional discrete Fourier transform for real-valued input.

    Parameters
    ----------
    x : Array
        Input array; must have a real-valued floating-point data type.
    n : int | None
        Number of points of x along axis to transform: x is trimmed or
        zero-padded to n; None: the size M of that axis. Default: None.
    axis : int
        Axis over which to compute the transform (negative counts from the
        last). Default: -1.
    norm : str
        Normalization: 'backward' (none), 'ortho' (1/sqrt(n)) or 'forward'
        (1/n). Default: 'backward'.

    Returns
    -------
    out : Array
        The non-negative frequency terms, of the complex dtype of x's precision
        and x's shape, except that axis has size n//2 + 1.

    Raises
    ------
    TypeError
        x not an array or not real floating-point, or n not an integer.
    ValueError
        n < 1 (or an empty axis with n None), an axis out of bounds, or
        another norm.
    """
    return _transform_1d("rfft", "rfftn", x, n, axis, norm, "real floating")


def irfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Computes the one-dimensional inverse of rfft for complex-valued input.

    Parameters
    ----------
    x : Array
        Input array of non-negative frequency terms; must have a complex
        floating-point data type.
    n : int | None
        Number of points along axis in the output; x is trimmed or zero-padded
        to n//2 + 1 points. None: 2*(M-1), M the size of the axis (pass an odd
        n for an odd-length output). Default: None.
    axis : int
        Axis over which to compute the transform (negative counts from the
        last). Default: -1.
    norm : str
        Normalization: 'backward' (1/n), 'ortho' (1/sqrt(n)) or 'forward'
        (none). Default: 'backward'.

    Returns
    -------
    out : Array
        The real-valued transform, of the real dtype of x's precision and x's
        shape, except that axis has size n.

    Raises
    ------
    TypeError
        x not an array or not complex floating-point, or n not an integer.
    ValueError
        n < 1 (or an axis of size 1 or less with n None), an axis out of
        bounds, or another norm.
    """
    return _transform_1d("irfft", "irfftn", x, n, axis, norm, "complex floating", inverse_real=True)


def hfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Computes the one-dimensional discrete Fourier transform of a signal with Hermitian symmetry.

    Parameters
    ----------
    x : Array
        Input array, the first half of a Hermitian-symmetric signal; must have
        a complex floating-point data type.
    n : int | None
        Number of points along axis in the output; x is trimmed or zero-padded
        to n//2 + 1 points. None: 2*(M-1), M the size of the axis. Default: None.
    axis : int
        Axis over which to compute the transform (negative counts from the
        last). Default: -1.
    norm : str
        Normalization: 'backward' (none), 'ortho' (1/sqrt(n)) or 'forward'
        (1/n). Default: 'backward'.

    Returns
    -------
    out : Array
        The real-valued transform, of the real dtype of x's precision and x's
        shape, except that axis has size n.

    Raises
    ------
    TypeError
        x not an array or not complex floating-point, or n not an integer.
    ValueError
        n < 1 (or an axis of size 1 or less with n None), an axis out of
        bounds, or another norm.
    """
    return _transform_1d("hfft", "hfft", x, n, axis, norm, "complex floating", inverse_real=True)


def ihfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Computes the one-dimensional inverse discrete Fourier transform of a signal with Hermitian symmetry.

    Parameters
    ----------
    x : Array
        Input array; must have a real-valued floating-point data type.
    n : int | None
        Number of points of x along axis to transform: x is trimmed or
        zero-padded to n; None: the size M of that axis. Default: None.
    axis : int
        Axis over which to compute the transform (negative counts from the
        last). Default: -1.
    norm : str
        Normalization: 'backward' (1/n), 'ortho' (1/sqrt(n)) or 'forward'
        (none). Default: 'backward'.

    Returns
    -------
    out : Array
        The non-negative frequency terms, of the complex dtype of x's precision
        and x's shape, except that axis has size n//2 + 1.

    Raises
    ------
    TypeError
        x not an array or not real floating-point, or n not an integer.
    ValueError
        n < 1 (or an empty axis with n None), an axis out of bounds, or
        another norm.
    """
    return _transform_1d("ihfft", "ihfft", x, n, axis, norm, "real floating")


# n-dimensional transforms

def _transform_nd(name, x, s, axes, norm, accepts, inverse_real=False):
    """(node, axes, sizes, norm) of an n-D transform, checked for `name`.

    sizes are the transform lengths, as in the 1-D case: for irfftn the
    lengths of the output (the last one 2*(M-1) by default).
    """
    node = node_of(x, name)
    check_dtype(node, accepts, name)
    ndim = len(node.shape)
    if axes is None:
        if s is not None:
            raise ValueError(f"{name}: s is given but axes is not; the standard requires axes along with s")
        axes = tuple(range(ndim))
    else:
        axes = _axes(axes, ndim, name)
    norm = _check_norm(norm, name)
    if s is None:
        sizes = [node.shape[a] for a in axes]
        if inverse_real and axes:
            sizes[-1] = 2 * (sizes[-1] - 1)
        for a, n in zip(axes, sizes):
            if n < 1:
                raise ValueError(f"{name}: axis {a} of x has size {node.shape[a]}, so its default transform "
                                 f"length is {n}; pass s with lengths >= 1")
    else:
        s = _ints(s, name, "s")
        if len(s) != len(axes):
            raise ValueError(f"{name}: s has {len(s)} entries but axes has {len(axes)}")
        for i, n in enumerate(s):
            if n < 1 and n != -1:
                raise ValueError(f"{name}: s[{i}] must be at least 1 (or -1 for the size of x), got {n}")
        # -1 means the size of x along that axis, as in NumPy (for irfftn too: an output of M points).
        sizes = [node.shape[a] if n == -1 else n for a, n in zip(axes, s)]
        for i, (a, n) in enumerate(zip(axes, sizes)):
            if n < 1:
                raise ValueError(f"{name}: s[{i}] is -1 but axis {a} of x has size 0")
    return node, axes, tuple(sizes), norm


def _complex_nd(name, x, s, axes, norm):
    node, axes, sizes, norm = _transform_nd(name, x, s, axes, norm, "complex floating")
    if not axes:
        # A transform over no axes has logical size prod(()) = 1: the identity under every norm.
        return wrap(node)
    return wrap(make(P[name], (node,), (axes, sizes, norm)))


def _real_nd(name, x, s, axes, norm, accepts, inverse_real):
    node, axes, sizes, norm = _transform_nd(name, x, s, axes, norm, accepts, inverse_real)
    if not axes:
        # The real transforms halve (or restore) the last transformed axis; with none there is no such axis.
        raise ValueError(f"{name}: needs at least one axis to transform, got x of shape {node.shape} and no axes")
    return wrap(make(P[name], (node,), (axes, sizes, norm)))


def fftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str = "backward") -> Array:
    """Computes the n-dimensional discrete Fourier transform.

    Parameters
    ----------
    x : Array
        Input array; must have a complex floating-point data type.
    s : sequence of ints | None
        Number of points to transform along each of axes: x is trimmed or
        zero-padded to s[i] along axes[i]; -1 or None: the size of the axis.
        Requires axes. Default: None.
    axes : sequence of ints | None
        Axes over which to compute the transform, each once (negative counts
        from the last); None: all axes. Default: None.
    norm : str
        Normalization: 'backward' (none), 'ortho' (1/sqrt(n)) or 'forward'
        (1/n), n the product of the transform lengths. Default: 'backward'.

    Returns
    -------
    out : Array
        The transform, of x's dtype and shape, except that axes[i] has size s[i].

    Raises
    ------
    TypeError
        x not an array or not complex floating-point, or s or axes not a
        sequence of integers.
    ValueError
        s without axes, s and axes of different lengths, a length < 1, an axis
        out of bounds or repeated, or another norm.
    """
    return _complex_nd("fftn", x, s, axes, norm)


def ifftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Array:
    """Computes the n-dimensional inverse discrete Fourier transform.

    Parameters
    ----------
    x : Array
        Input array; must have a complex floating-point data type.
    s : sequence of ints | None
        Number of points to transform along each of axes: x is trimmed or
        zero-padded to s[i] along axes[i]; -1 or None: the size of the axis.
        Requires axes. Default: None.
    axes : sequence of ints | None
        Axes over which to compute the transform, each once (negative counts
        from the last); None: all axes. Default: None.
    norm : str
        Normalization: 'backward' (1/n), 'ortho' (1/sqrt(n)) or 'forward'
        (none), n the product of the transform lengths. Default: 'backward'.

    Returns
    -------
    out : Array
        The transform, of x's dtype and shape, except that axes[i] has size s[i].

    Raises
    ------
    TypeError
        x not an array or not complex floating-point, or s or axes not a
        sequence of integers.
    ValueError
        s without axes, s and axes of different lengths, a length < 1, an axis
        out of bounds or repeated, or another norm.
    """
    return _complex_nd("ifftn", x, s, axes, norm)


def rfftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Array:
    """Computes the n-dimensional discrete Fourier transform for real-valued input.

    Parameters
    ----------
    x : Array
        Input array; must have a real-valued floating-point data type.
    s : sequence of ints | None
        Number of points to transform along each of axes: x is trimmed or
        zero-padded to s[i] along axes[i]; -1 or None: the size of the axis.
        Requires axes. Default: None.
    axes : sequence of ints | None
        Axes over which to compute the transform, at least one, each once
        (negative counts from the last); None: all axes. Default: None.
    norm : str
        Normalization: 'backward' (none), 'ortho' (1/sqrt(n)) or 'forward'
        (1/n), n the product of the transform lengths. Default: 'backward'.

    Returns
    -------
    out : Array
        The transform, of the complex dtype of x's precision and x's shape,
        except that the last of axes has size s[-1]//2 + 1 and the others s[i].

    Raises
    ------
    TypeError
        x not an array or not real floating-point, or s or axes not a sequence
        of integers.
    ValueError
        s without axes, s and axes of different lengths, a length < 1, no axes,
        an axis out of bounds or repeated, or another norm.
    """
    return _real_nd("rfftn", x, s, axes, norm, "real floating", inverse_real=False)


def irfftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str = "backward") -> Array:
    """Computes the n-dimensional inverse of rfftn for complex-valued input.

    Parameters
    ----------
    x : Array
        Input array; must have a complex floating-point data type.
    s : sequence of ints | None
        Number of points along each of axes in the output; -1 or None: the
        size of the axis, except 2*(M-1) for the last of axes when s is None.
        Requires axes. Default: None.
    axes : sequence of ints | None
        Axes over which to compute the transform, at least one, each once
        (negative counts from the last); None: all axes. Default: None.
    norm : str
        Normalization: 'backward' (1/n), 'ortho' (1/sqrt(n)) or 'forward'
        (none), n the product of the output lengths. Default: 'backward'.

    Returns
    -------
    out : Array
        The real-valued transform, of the real dtype of x's precision and x's
        shape, except that axes[i] has size s[i].

    Raises
    ------
    TypeError
        x not an array or not complex floating-point, or s or axes not a
        sequence of integers.
    ValueError
        s without axes, s and axes of different lengths, a length < 1, no axes,
        an axis out of bounds or repeated, or another norm.
    """
    return _real_nd("irfftn", x, s, axes, norm, "complex floating", inverse_real=True)


# Sample frequencies

def _freq_args(name, n, d, dtype, device):
    n = integer_argument(n, name, "n", refuse_bool=True)
    if n < 1:
        raise ValueError(f"{name}: n must be at least 1, got {n}")
    if isinstance(d, bool) or not isinstance(d, numbers.Real):
        raise TypeError(f"{name}: d must be a real number, got {type(d).__name__}")
    d = float(d)
    if d == 0:
        raise ValueError(f"{name}: d (the sample spacing) must not be zero")
    dtype = check_dtype_arg(dtype, name) or dt.DEFAULT_FLOAT
    if dtype not in dt.REAL_FLOATING:
        raise TypeError(f"{name}: dtype must be a real-valued floating-point dtype, got {dtype}")
    return n, d, dtype, check_device(device, name)


def _scaled(name, k, n, d, dtype, device):
    # k holds exact integers in float64; scaling by NumPy's 1/(n*d) there and
    # rounding once to `dtype` gives NumPy's float64 values bit for bit, and
    # float32 values as close as float32 allows.
    scale = scalar_node(1.0 / (n * d), dt.float64, device, name)
    return wrap(astype_node(make(P["multiply"], (k, scale)), dtype))


@composite
def fftfreq(n: int, /, *, d: float = 1.0, dtype: DType | None = None, device: DeviceLike | None = None) -> Array:
    """Computes the discrete Fourier transform sample frequencies.

    Parameters
    ----------
    n : int
        Window length, at least 1.
    d : float
        Sample spacing, non-zero. Default: 1.0.
    dtype : DType | None
        Output array data type, real floating-point; None: the default real
        floating-point dtype. Default: None.
    device : Device | str | None
        Device to place the array on, or its name; None: the default device.

    Returns
    -------
    out : Array
        The n frequencies [0, 1, ..., n/2-1, -n/2, ..., -1] / (d*n) for even n,
        [0, 1, ..., (n-1)/2, -(n-1)/2, ..., -1] / (d*n) for odd n.

    Raises
    ------
    TypeError
        n not an integer, d not a real number, or a dtype that is not real
        floating-point.
    ValueError
        n < 1, d == 0, or an unknown device.
    """
    n, d, dtype, device = _freq_args("fftfreq", n, d, dtype, device)
    check_size((n,), dt.float64, "fftfreq")  # the frequencies are computed in float64
    index = iota((n,), 0, dt.float64, device)
    # The first (n+1)//2 frequencies are non-negative; the rest are index - n.
    negative = make(P["greater_equal"], (index, scalar_node((n + 1) // 2, dt.float64, device, "fftfreq")))
    wrapped = make(P["subtract"], (index, scalar_node(n, dt.float64, device, "fftfreq")))
    k = make(P["where"], (negative, wrapped, index))
    return _scaled("fftfreq", k, n, d, dtype, device)


@composite
def rfftfreq(n: int, /, *, d: float = 1.0, dtype: DType | None = None, device: DeviceLike | None = None) -> Array:
    """Computes the discrete Fourier transform sample frequencies (for rfft and irfft).

    Parameters
    ----------
    n : int
        Window length, at least 1.
    d : float
        Sample spacing, non-zero. Default: 1.0.
    dtype : DType | None
        Output array data type, real floating-point; None: the default real
        floating-point dtype. Default: None.
    device : Device | str | None
        Device to place the array on, or its name; None: the default device.

    Returns
    -------
    out : Array
        The n//2 + 1 frequencies [0, 1, ..., n//2] / (d*n); the Nyquist
        frequency component is considered positive.

    Raises
    ------
    TypeError
        n not an integer, d not a real number, or a dtype that is not real
        floating-point.
    ValueError
        n < 1, d == 0, or an unknown device.
    """
    n, d, dtype, device = _freq_args("rfftfreq", n, d, dtype, device)
    check_size((n // 2 + 1,), dt.float64, "rfftfreq")  # the frequencies are computed in float64
    k = iota((n // 2 + 1,), 0, dt.float64, device)
    return _scaled("rfftfreq", k, n, d, dtype, device)


# Shifts

def _shift(name, x, axes, inverse):
    node = node_of(x, name)
    check_dtype(node, "floating", name)
    ndim = len(node.shape)
    if axes is None:
        axes = tuple(range(ndim))
    elif hasattr(axes, "__index__"):
        axes = (normalize_axis(integer_argument(axes, name, "axes", refuse_bool=True), ndim, name),)
    else:
        axes = _axes(axes, ndim, name)
    # fftshift moves element n//2 to the front; ifftshift undoes it, which for
    # odd n is a shift one element shorter.
    shifts = tuple(-(node.shape[a] // 2) if inverse else node.shape[a] // 2 for a in axes)
    return roll(x, shifts, axis=axes)


@composite
def fftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """Shifts the zero-frequency component to the center of the spectrum.

    Parameters
    ----------
    x : Array
        Input array; should have a floating-point data type.
    axes : int | sequence of ints | None
        Axes over which to shift, each once (negative counts from the last);
        None: all axes. Default: None.

    Returns
    -------
    out : Array
        x with its half-spaces swapped along axes (element n//2 first), of x's
        dtype and shape.

    Raises
    ------
    TypeError
        x not an array or not floating-point, or axes not integers.
    ValueError
        An axis out of bounds or repeated.
    """
    return _shift("fftshift", x, axes, inverse=False)


@composite
def ifftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """Inverse of fftshift.

    Parameters
    ----------
    x : Array
        Input array; should have a floating-point data type.
    axes : int | sequence of ints | None
        Axes over which to shift, each once (negative counts from the last);
        None: all axes. Default: None.

    Returns
    -------
    out : Array
        x shifted back along axes, of x's dtype and shape. For odd lengths
        this differs from fftshift by one element.

    Raises
    ------
    TypeError
        x not an array or not floating-point, or axes not integers.
    ValueError
        An axis out of bounds or repeated.
    """
    return _shift("ifftshift", x, axes, inverse=True)
