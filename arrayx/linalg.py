"""The array API standard's linear algebra extension (`xp.linalg`).

Decompositions, inverses, determinants and singular values are primitives
(graph/primitives.py), each one node over a whole stack of matrices; the
others are composites of primitives: matrix_rank and the spectral matrix
norms reduce `svdvals`, vector_norm reduces `abs`, cross combines slices,
trace sums a `diagonal`, matrix_power squares repeatedly, outer multiplies two
reshaped vectors. Shapes and dtypes are checked here, at the call, so a bad
argument raises naming the function (`linalg.<name>`) before anything runs.
Multi-output functions return the standard's named tuples; their fields
select outputs of one node, so the decomposition runs once however many
fields are used.
"""

import math
from typing import NamedTuple

import numpy as np

from . import dtypes as dt
from .graph.apply import apply_multi
from .graph.primitives import MOVEMENT, reduced_shape
from .namespace.array_object import Array
from .namespace.build import (P, astype_node, broadcast_node, broadcast_shapes, check_dtype, composite, full_node,
                              integer_argument, make, node_of, normalize_axes, reshape_node, same_device, scalar_node,
                              wrap)
from .namespace.creation import eye
from .namespace.hints import Axes, DType
from .namespace.linear_algebra import (contraction_axis, matmul, matrix_transpose, numeric_operands,
                                       permute_node, tensordot, vecdot)
from .namespace.statistical import accumulate, sum_dtype

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul",
    "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet",
    "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


# --- argument checks -------------------------------------------------------

def _lapack(node, name, argname="x"):
    """`node`, or a TypeError if LAPACK has no routine for its dtype (float16:
    NumPy and PyTorch refuse it too)."""
    if node.dtype not in dt.CATEGORIES["lapack floating"]:
        raise TypeError(f"{name}: {argname} has dtype {node.dtype}, which LAPACK does not support; "
                        f"expected float32, float64, complex64 or complex128 (cast it with astype)")
    return node


def _matrices(x, name, accepts="floating", square=False, lapack=False):
    """The node of a (stack of) matrices x: ndim >= 2, dtype in `accepts`, maybe
    square, and a dtype LAPACK supports if `lapack`. These are the standard's
    categories, checked before the casts that reach the primitives' "lapack
    floating" (float16 gets its own message, see `_lapack`)."""
    node = node_of(x, name)
    if accepts is not None:
        check_dtype(node, accepts, name)
    if lapack:
        _lapack(node, name)
    shape = node.shape
    if len(shape) < 2:
        raise ValueError(f"{name}: x must have at least 2 dimensions (a matrix or a stack of matrices), "
                         f"got shape {shape}")
    if square and shape[-1] != shape[-2]:
        raise ValueError(f"{name}: x must be a square matrix (or a stack of them), got shape {shape}")
    return node


def _real_number(value):
    """`value` as a float if it is a real Python/NumPy number (not bool), else None."""
    if type(value) is int or type(value) is float:   # the common case first
        return float(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    return float(value)


# --- node helpers ----------------------------------------------------------

def _realized_data(node):
    """Whether `node` is realized, or a movement over realized data (which the
    scheduler realizes as a view, see scheduler.collect)."""
    return node.buffer is not None or (node.op.kind is MOVEMENT and node.inputs[0].buffer is not None)


def _reduce(prim, node, axes, keepdims=False):
    return make(P[prim], (node,), (tuple(axes), keepdims))


def _last(node):
    """The last axis of node, as a reduction's axes."""
    return (len(node.shape) - 1,)


def _abs_squared(node):
    """|x|**2 in x's real dtype (re**2 + im**2 for complex, without a square root)."""
    if node.dtype in dt.COMPLEX:
        re, im = make(P["real"], (node,)), make(P["imag"], (node,))
        return make(P["add"], (make(P["multiply"], (re, re)), make(P["multiply"], (im, im))))
    return make(P["multiply"], (node, node))


def _zero_safe(node, at_zero, fn):
    """fn(node) where node != 0 and `at_zero` (= fn(0)) where node == 0, where fn sees 1.

    Same value; but the gradient at 0 is 0 (autodiff's `where` sends no
    cotangent to the branch not taken), the subgradient of a norm at 0,
    instead of the NaN (inf * 0) of differentiating sqrt or pow at 0.
    """
    zero = make(P["equal"], (node, scalar_node(0.0, node.dtype, node.device, "linalg")))
    safe = make(P["where"], (zero, scalar_node(1.0, node.dtype, node.device, "linalg"), node))
    return make(P["where"], (zero, scalar_node(at_zero, node.dtype, node.device, "linalg"), fn(safe)))


def _sqrt_safe(node):
    return _zero_safe(node, 0.0, lambda n: make(P["sqrt"], (n,)))


def _rtol(rtol, node, name):
    """The rtol of matrix_rank/pinv as (node, batch shape of the result).

    A float is a 0-d array of x's real dtype; an array must be real floating
    and broadcast against x's stack shape; None is max(M, N) * eps.
    """
    real = dt.real_dtype(node.dtype)
    batch = node.shape[:-2]
    if rtol is None:
        eps = float(np.finfo(real.dtype).eps)
        return scalar_node(max(node.shape[-2:]) * eps, real, node.device, name), batch
    value = _real_number(rtol)
    if value is not None:
        return scalar_node(value, real, node.device, name), batch
    if not isinstance(rtol, Array):
        raise TypeError(f"{name}: rtol must be None, a float or an arrayx array, got {type(rtol).__name__}")
    tol = rtol._node
    check_dtype(tol, "real floating", name, "rtol")
    same_device(name, (node, tol))
    return tol, broadcast_shapes(name, batch, tol.shape)


def _tolerance(s, tol):
    """rtol * largest singular value, shaped to compare with s (..., K), in one dtype with s."""
    smax = _reduce("max", s, _last(s), keepdims=True)
    if tol.shape:
        tol = reshape_node(tol, tol.shape + (1,))
    dtype = dt.PROMOTION[s.dtype, tol.dtype]
    cutoff = make(P["multiply"], (astype_node(smax, dtype), astype_node(tol, dtype)))
    return astype_node(s, dtype), cutoff


# --- the functions ---------------------------------------------------------

def cholesky(x: Array, /, *, upper: bool = False) -> Array:
    """Returns the lower (upper) Cholesky decomposition of a complex Hermitian or real symmetric positive-
    definite matrix x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, M) of Hermitian (or real symmetric)
        positive-definite matrices (not checked); should have a floating-point
        data type.
    upper : bool
        Whether to return the upper-triangular factor U (x = U^H U) instead of
        the lower-triangular L (x = L L^H). Default: False.

    Returns
    -------
    out : Array
        The Cholesky factors, of the shape and dtype of x.

    Raises
    ------
    TypeError
        x not an array, or of a dtype other than float32, float64, complex64 or
        complex128 (LAPACK has no float16: cast with astype).
    ValueError
        x not a square matrix or a stack of them.
    numpy.linalg.LinAlgError
        A matrix that is not positive-definite, when the result is computed.
    """
    node = _matrices(x, "linalg.cholesky", square=True, lapack=True)
    return wrap(make(P["cholesky"], (node,), (bool(upper),)))


@composite
def cross(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Returns the cross product of 3-element vectors.

    Parameters
    ----------
    x1 : Array
        First input array; must have a numeric data type and size 3 along axis.
    x2 : Array
        Second input array; must have a numeric data type and size 3 along
        axis, and broadcast against x1 along the other axes.
    axis : int
        Axis containing the vectors, counted from the last: on [-N, -1], N the
        smaller number of dimensions (a non-negative axis only when both have
        the same number). Default: -1.

    Returns
    -------
    out : Array
        The cross products, with the dtype the operands promote to.

    Raises
    ------
    TypeError
        An operand not an array or not numeric, or axis not an integer.
    ValueError
        Size other than 3 along axis, an axis out of bounds or ambiguous,
        shapes that do not broadcast, or operands on different devices.
    """
    name = "linalg.cross"
    n1, n2 = numeric_operands(name, x1, x2)
    axis = contraction_axis(name, axis, len(n1.shape), len(n2.shape))
    for n, argname in ((n1, "x1"), (n2, "x2")):
        if n.shape[axis] != 3:
            raise ValueError(f"{name}: axis {axis} of {argname} must have size 3, got shape {n.shape}")
    shape = broadcast_shapes(name, n1.shape, n2.shape)

    def component(node, i):
        ndim = len(node.shape)
        stops = list(node.shape)
        starts, steps = [0] * ndim, [1] * ndim
        starts[axis], stops[axis] = i, i + 1
        return make(P["slice"], (node,), (tuple(starts), tuple(stops), tuple(steps)))

    a = [component(n1, i) for i in range(3)]
    b = [component(n2, i) for i in range(3)]

    def minor(i, j):
        return make(P["subtract"], (make(P["multiply"], (a[i], b[j])), make(P["multiply"], (a[j], b[i]))))

    parts = (minor(1, 2), minor(2, 0), minor(0, 1))
    return wrap(make(P["concat"], parts, (len(shape) + axis,)))


def det(x: Array, /) -> Array:
    """Returns the determinant of a square matrix (or a stack of square matrices) x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, M); should have a floating-point data type.

    Returns
    -------
    out : Array
        The determinants, of shape x.shape[:-2] and x's dtype.

    Raises
    ------
    TypeError
        x not an array, or of a dtype other than float32, float64, complex64 or
        complex128 (LAPACK has no float16: cast with astype).
    ValueError
        x not a square matrix or a stack of them.
    """
    return wrap(make(P["det"], (_matrices(x, "linalg.det", square=True, lapack=True),)))


def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    """Returns the specified diagonals of a matrix (or a stack of matrices) x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, N): a stack of M x N matrices.
    offset : int
        Offset of the diagonal from the main diagonal: positive above it,
        negative below it. Default: 0.

    Returns
    -------
    out : Array
        The diagonals, of shape x.shape[:-2] + (K,) for a diagonal of K
        elements (0 for an offset beyond the matrix), and x's dtype.

    Raises
    ------
    TypeError
        x not an array, or offset not an integer.
    ValueError
        x with fewer than two dimensions.
    """
    node = _matrices(x, "linalg.diagonal", accepts=None)
    return wrap(make(P["diagonal"], (node,), (integer_argument(offset, "linalg.diagonal", "offset"),)))


@composite
def eig(x: Array, /) -> EigResult:
    """Returns eigenvalues and eigenvectors of a real or complex matrix (or stack of matrices) x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, M); should have a floating-point data type.

    Returns
    -------
    out : EigResult
        A namedtuple (eigenvalues, eigenvectors) of shapes (..., M) and
        (..., M, M), the eigenvectors as columns; both of the complex dtype of
        x's precision. Their order is unspecified.

    Raises
    ------
    TypeError
        x not an array, or of a dtype other than float32, float64, complex64 or
        complex128 (LAPACK has no float16: cast with astype).
    ValueError
        x not a square matrix or a stack of them.
    """
    node = _matrices(x, "linalg.eig", square=True, lapack=True)
    return EigResult(*(wrap(n) for n in apply_multi(P["eig"], (node,))))


@composite
def eigh(x: Array, /) -> EighResult:
    """Returns an eigenvalue decomposition of a complex Hermitian or real symmetric matrix (or a stack of
    matrices) x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, M) of Hermitian (or real symmetric)
        matrices (not checked); should have a floating-point data type.

    Returns
    -------
    out : EighResult
        A namedtuple (eigenvalues, eigenvectors): the eigenvalues, of shape
        (..., M) and x's real dtype (their order is unspecified); the
        eigenvectors as columns, of x's shape and dtype.

    Raises
    ------
    TypeError
        x not an array, or of a dtype other than float32, float64, complex64 or
        complex128 (LAPACK has no float16: cast with astype).
    ValueError
        x not a square matrix or a stack of them.
    """
    node = _matrices(x, "linalg.eigh", square=True, lapack=True)
    return EighResult(*(wrap(n) for n in apply_multi(P["eigh"], (node,))))


def eigvals(x: Array, /) -> Array:
    """Returns the eigenvalues of a real or complex matrix (or a stack of matrices) x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, M); should have a floating-point data type.

    Returns
    -------
    out : Array
        The eigenvalues, of shape (..., M) and the complex dtype of x's
        precision. Their order is unspecified.

    Raises
    ------
    TypeError
        x not an array, or of a dtype other than float32, float64, complex64 or
        complex128 (LAPACK has no float16: cast with astype).
    ValueError
        x not a square matrix or a stack of them.
    """
    return wrap(make(P["eigvals"], (_matrices(x, "linalg.eigvals", square=True, lapack=True),)))


def eigvalsh(x: Array, /) -> Array:
    """Returns the eigenvalues of a complex Hermitian or real symmetric matrix (or a stack of matrices) x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, M) of Hermitian (or real symmetric)
        matrices (not checked); should have a floating-point data type.

    Returns
    -------
    out : Array
        The eigenvalues, of shape (..., M) and x's real dtype. Their order is
        unspecified.

    Raises
    ------
    TypeError
        x not an array, or of a dtype other than float32, float64, complex64 or
        complex128 (LAPACK has no float16: cast with astype).
    ValueError
        x not a square matrix or a stack of them.
    """
    return wrap(make(P["eigvalsh"], (_matrices(x, "linalg.eigvalsh", square=True, lapack=True),)))


def inv(x: Array, /) -> Array:
    """Returns the multiplicative inverse of a square matrix (or a stack of square matrices) x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, M); should have a floating-point data type.

    Returns
    -------
    out : Array
        The inverses, of the shape and dtype of x.

    Raises
    ------
    TypeError
        x not an array, or of a dtype other than float32, float64, complex64 or
        complex128 (LAPACK has no float16: cast with astype).
    ValueError
        x not a square matrix or a stack of them.
    numpy.linalg.LinAlgError
        A singular matrix, when the result is computed.
    """
    return wrap(make(P["inv"], (_matrices(x, "linalg.inv", square=True, lapack=True),)))


_MATRIX_ORDS = (1, -1, 2, -2, math.inf, -math.inf)


@composite
def matrix_norm(x: Array, /, *, keepdims: bool = False, ord: int | float | str = "fro") -> Array:
    """Computes the matrix norm of a matrix (or a stack of matrices) x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, N); should have a floating-point data type.
    keepdims : bool
        Whether to keep the last two axes as singleton dimensions. Default: False.
    ord : int | float | str
        Order of the norm: 'fro' (Frobenius), 'nuc' (sum of singular values),
        1 / -1 (max / min column sum of absolute values), 2 / -2 (largest /
        smallest singular value), inf / -inf (max / min row sum of absolute
        values). Default: 'fro'.

    Returns
    -------
    out : Array
        The norms (0 for an empty matrix), of x's real floating-point dtype.

    Raises
    ------
    TypeError
        x not an array, or not of a floating-point dtype (for 'nuc', 2 and -2,
        float16 too: LAPACK has no routine for it).
    ValueError
        x with fewer than two dimensions, or another ord.
    """
    name = "linalg.matrix_norm"
    node = _matrices(x, name)
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise ValueError(f"{name}: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}")
    elif _real_number(ord) not in _MATRIX_ORDS:
        raise ValueError(f"{name}: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}")
    real = dt.real_dtype(node.dtype)
    ndim = len(node.shape)
    batch = node.shape[:-2]
    # Sums run in the accumulator dtype: squares of float16 values above 256 overflow float16.
    wide = astype_node(node, dt.accumulator(node.dtype))
    if 0 in node.shape[-2:]:
        # The zero map: every norm is 0 (and max/min over no values would have no identity).
        out = full_node(batch, 0, real, node.device)
    elif ord == "fro":
        out = _sqrt_safe(_reduce("sum", _abs_squared(wide), (ndim - 2, ndim - 1)))
    elif ord == "nuc" or ord in (2, -2):
        s = make(P["svdvals"], (_lapack(node, name),))
        out = _reduce("sum" if ord == "nuc" else "max" if ord == 2 else "min", s, _last(s))
    else:
        # 1: column sums (over rows, axis -2); inf: row sums (over columns, axis -1).
        sums = _reduce("sum", make(P["abs"], (wide,)), (ndim - 2 if abs(ord) == 1 else ndim - 1,))
        out = _reduce("max" if ord > 0 else "min", sums, _last(sums))
    out = astype_node(out, real)
    if keepdims:
        out = reshape_node(out, batch + (1, 1))
    return wrap(out)


@composite
def matrix_power(x: Array, n: int, /) -> Array:
    """Raises a square matrix (or a stack of square matrices) x to an integer power n.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, M); should have a floating-point data type.
    n : int
        Integer exponent: 0 gives the identity, a negative n the inverse raised
        to -n (by repeated squaring: about 2 log2(|n|) products).

    Returns
    -------
    out : Array
        The powers, of the shape and dtype of x.

    Raises
    ------
    TypeError
        x not an array or not floating-point, or n not an integer.
    ValueError
        x not a square matrix or a stack of them.
    numpy.linalg.LinAlgError
        A singular matrix with a negative n, when the result is computed.
    """
    name = "linalg.matrix_power"
    node = _matrices(x, name, square=True)
    n = integer_argument(n, name, "n")
    if n == 0:
        identity = eye(node.shape[-1], dtype=node.dtype, device=node.device)._node
        return wrap(broadcast_node(identity, node.shape))
    power = node if n > 0 else make(P["inv"], (_lapack(node, name),))
    result, k = None, abs(n)
    while True:
        if k & 1:
            result = power if result is None else make(P["matmul"], (result, power))
        k >>= 1
        if not k:
            return wrap(result)
        power = make(P["matmul"], (power, power))


@composite
def matrix_rank(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """Returns the rank (i.e., number of non-zero singular values) of a matrix (or a stack of matrices).

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, N); should have a floating-point data type.
    rtol : float | Array | None
        Relative tolerance: singular values at most rtol times the largest count
        as zero. An array must be real floating-point and broadcast against
        x.shape[:-2]; None: max(M, N) times the machine epsilon of x's real
        dtype. Default: None.

    Returns
    -------
    out : Array
        The ranks, of shape x.shape[:-2] (broadcast with rtol's) and the
        default integer dtype.

    Raises
    ------
    TypeError
        x not an array, or of a dtype other than float32, float64, complex64 or
        complex128 (LAPACK has no float16); an rtol of another type.
    ValueError
        x with fewer than two dimensions, or an rtol that does not broadcast.
    """
    name = "linalg.matrix_rank"
    node = _matrices(x, name, lapack=True)
    tol, batch = _rtol(rtol, node, name)
    if 0 in node.shape[-2:]:
        return wrap(full_node(batch, 0, dt.DEFAULT_INT, node.device))
    s, cutoff = _tolerance(make(P["svdvals"], (node,)), tol)
    nonzero = astype_node(make(P["greater"], (s, cutoff)), dt.DEFAULT_INT)
    return wrap(_reduce("sum", nonzero, _last(nonzero)))


@composite
def outer(x1: Array, x2: Array, /) -> Array:
    """Returns the outer product of two vectors x1 and x2.

    Parameters
    ----------
    x1 : Array
        First one-dimensional input array, of size N; must have a numeric data type.
    x2 : Array
        Second one-dimensional input array, of size M; must have a numeric data type.

    Returns
    -------
    out : Array
        The outer product, of shape (N, M) and the dtype the operands promote to.

    Raises
    ------
    TypeError
        An operand not an array, or not numeric.
    ValueError
        An operand that is not one-dimensional, or operands on different devices.
    """
    name = "linalg.outer"
    n1, n2 = numeric_operands(name, x1, x2)
    for n, argname in ((n1, "x1"), (n2, "x2")):
        if len(n.shape) != 1:
            raise ValueError(f"{name}: {argname} must be one-dimensional, got shape {n.shape}")
    column = reshape_node(n1, (n1.shape[0], 1))
    row = reshape_node(n2, (1, n2.shape[0]))
    return wrap(make(P["multiply"], (column, row)))


@composite
def pinv(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """Returns the (Moore-Penrose) pseudo-inverse of a matrix (or a stack of matrices) x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, N); should have a floating-point data type.
    rtol : float | Array | None
        Relative tolerance: singular values at most rtol times the largest are
        treated as zero. An array must be real floating-point and broadcast
        against x.shape[:-2]; None: max(M, N) times the machine epsilon of x's
        real dtype. Default: None.

    Returns
    -------
    out : Array
        The pseudo-inverses, of shape (..., N, M) and x's dtype.

    Raises
    ------
    TypeError
        x not an array, or of a dtype other than float32, float64, complex64 or
        complex128 (LAPACK has no float16); an rtol of another type.
    ValueError
        x with fewer than two dimensions, or an rtol that does not broadcast.
    """
    name = "linalg.pinv"
    node = _matrices(x, name, lapack=True)
    tol, batch = _rtol(rtol, node, name)
    m, n = node.shape[-2:]
    if not isinstance(rtol, Array):
        return wrap(make(P["pinv"], (node,), (None if rtol is None else float(rtol),)))
    if m == 0 or n == 0:
        return wrap(full_node(batch + (n, m), 0, node.dtype, node.device))
    # An array rtol is data, not a static attribute: compose from the reduced
    # SVD, pinv = V diag(1/s, where s > cutoff, else 0) U^H.
    u, s, vh = apply_multi(P["svd"], (node,), (False,))
    s_cmp, cutoff = _tolerance(s, tol)
    keep = make(P["greater"], (s_cmp, cutoff))
    real = s.dtype
    inverse = make(P["divide"], (scalar_node(1.0, real, node.device, name), s))
    s_inv = astype_node(make(P["where"], (keep, inverse, scalar_node(0.0, real, node.device, name))), node.dtype)
    v = _conj_transpose(vh)
    scaled = make(P["multiply"], (v, reshape_node(s_inv, s_inv.shape[:-1] + (1, s_inv.shape[-1]))))
    return wrap(make(P["matmul"], (scaled, _conj_transpose(u))))


def _conj_transpose(node):
    ndim = len(node.shape)
    node = permute_node(node, tuple(range(ndim - 2)) + (ndim - 1, ndim - 2))
    return make(P["conj"], (node,)) if node.dtype in dt.COMPLEX else node


@composite
def qr(x: Array, /, *, mode: str = "reduced") -> QRResult:
    """Returns the QR decomposition of a full column rank matrix (or a stack of matrices).

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, N); should have a floating-point data type.
    mode : str
        'reduced': Q of shape (..., M, K) and R of shape (..., K, N), K =
        min(M, N); 'complete': Q of shape (..., M, M) and R of shape
        (..., M, N). Default: 'reduced'.

    Returns
    -------
    out : QRResult
        A namedtuple (Q, R): Q with orthonormal columns, R upper-triangular,
        both of x's dtype.

    Raises
    ------
    TypeError
        x not an array, or of a dtype other than float32, float64, complex64 or
        complex128 (LAPACK has no float16: cast with astype).
    ValueError
        x with fewer than two dimensions, or another mode.
    """
    name = "linalg.qr"
    node = _matrices(x, name, lapack=True)
    if not isinstance(mode, str) or mode not in ("reduced", "complete"):
        raise ValueError(f"{name}: mode must be 'reduced' or 'complete', got {mode!r}")
    return QRResult(*(wrap(n) for n in apply_multi(P["qr"], (node,), (mode,))))


@composite
def slogdet(x: Array, /) -> SlogdetResult:
    """Returns the sign and the natural logarithm of the absolute value of the determinant of a square
    matrix (or a stack of square matrices) x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, M); should have a floating-point data type.

    Returns
    -------
    out : SlogdetResult
        A namedtuple (sign, logabsdet), each of shape x.shape[:-2]: sign of
        x's dtype (a unit complex number for complex x), logabsdet of its real
        dtype. A zero determinant gives sign 0 and logabsdet -inf.

    Raises
    ------
    TypeError
        x not an array, or of a dtype other than float32, float64, complex64 or
        complex128 (LAPACK has no float16: cast with astype).
    ValueError
        x not a square matrix or a stack of them.
    """
    node = _matrices(x, "linalg.slogdet", square=True, lapack=True)
    return SlogdetResult(*(wrap(n) for n in apply_multi(P["slogdet"], (node,))))


def solve(x1: Array, x2: Array, /) -> Array:
    """Returns the solution of a square system of linear equations with a unique solution.

    Parameters
    ----------
    x1 : Array
        Coefficient array A of shape (..., M, M), of full rank; should have a
        floating-point data type.
    x2 : Array
        Ordinate array B: of shape (M,), one vector for every matrix of x1; or
        (..., M, K), whose stack shape broadcasts against x1's. Should have a
        floating-point data type.

    Returns
    -------
    out : Array
        The solution X of A X = B: of shape x1.shape[:-2] + (M,) for a vector
        x2, else the broadcast stack shape + (M, K); the dtype the operands
        promote to.

    Raises
    ------
    TypeError
        An operand not an array or not floating-point (float16 included:
        LAPACK has no routine for it).
    ValueError
        x1 not square, x2 of a shape that does not match it, or operands on
        different devices.
    numpy.linalg.LinAlgError
        A singular matrix, when the result is computed.
    """
    name = "linalg.solve"
    n1, n2 = node_of(x1, name, "x1"), node_of(x2, name, "x2")
    same_device(name, (n1, n2))
    check_dtype(n1, "floating", name, "x1")  # each operand before promotion
    check_dtype(n2, "floating", name, "x2")
    s1, s2 = n1.shape, n2.shape
    if len(s1) < 2 or s1[-1] != s1[-2]:
        raise ValueError(f"{name}: x1 must be a square matrix (or a stack of them), got shape {s1}")
    m = s1[-1]
    if len(s2) == 0 or (s2[0] if len(s2) == 1 else s2[-2]) != m:
        raise ValueError(f"{name}: x2 must have shape ({m},) or (..., {m}, K) to match x1 of shape {s1}, "
                         f"got shape {s2}")
    if len(s2) > 1:
        broadcast_shapes(name, s1[:-2], s2[:-2])
    dtype = dt.PROMOTION[n1.dtype, n2.dtype]
    n1, n2 = astype_node(n1, dtype), astype_node(n2, dtype)
    return wrap(make(P["solve"], (_lapack(n1, name, "x1"), _lapack(n2, name, "x2"))))


@composite
def svd(x: Array, /, *, full_matrices: bool = True) -> SVDResult:
    """Returns a singular value decomposition (SVD) of a matrix (or a stack of matrices) x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, N); should have a floating-point data type.
    full_matrices : bool
        True: U of shape (..., M, M) and Vh of shape (..., N, N); False: only
        the leading K = min(M, N) singular vectors, U (..., M, K) and Vh
        (..., K, N). Default: True.

    Returns
    -------
    out : SVDResult
        A namedtuple (U, S, Vh) with x = U @ diag(S) @ Vh: U and Vh of x's
        dtype, S of shape (..., K), of x's real dtype, in descending order.

    Raises
    ------
    TypeError
        x not an array, or of a dtype other than float32, float64, complex64 or
        complex128 (LAPACK has no float16: cast with astype).
    ValueError
        x with fewer than two dimensions.
    """
    node = _matrices(x, "linalg.svd", lapack=True)
    return SVDResult(*(wrap(n) for n in apply_multi(P["svd"], (node,), (bool(full_matrices),))))


def svdvals(x: Array, /) -> Array:
    """Returns the singular values of a matrix (or a stack of matrices) x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, N); should have a floating-point data type.

    Returns
    -------
    out : Array
        The singular values in descending order, of shape (..., K), K =
        min(M, N), and x's real dtype.

    Raises
    ------
    TypeError
        x not an array, or of a dtype other than float32, float64, complex64 or
        complex128 (LAPACK has no float16: cast with astype).
    ValueError
        x with fewer than two dimensions.
    """
    return wrap(make(P["svdvals"], (_matrices(x, "linalg.svdvals", lapack=True),)))


@composite
def trace(x: Array, /, *, offset: int = 0, dtype: DType | None = None) -> Array:
    """Returns the sum along the specified diagonals of a matrix (or a stack of matrices) x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, N); should have a numeric data type.
    offset : int
        Offset of the diagonal from the main diagonal: positive above it,
        negative below it. Default: 0.
    dtype : DType | None
        Data type of the result, in which the diagonal is summed; None: x's
        dtype, except that bool and signed integers take the default integer
        dtype and unsigned integers uint64. Default: None.

    Returns
    -------
    out : Array
        The traces, of shape x.shape[:-2] and the dtype above.

    Raises
    ------
    TypeError
        x not an array, offset not an integer, an unsupported dtype, or a real
        dtype for complex x.
    ValueError
        x with fewer than two dimensions.
    """
    name = "linalg.trace"
    node = _matrices(x, name, accepts=None)
    diag = make(P["diagonal"], (node,), (integer_argument(offset, name, "offset"),))
    return wrap(accumulate(P["sum"], diag, (_last(diag), False), sum_dtype(node, dtype, name)))


@composite
def vector_norm(x: Array, /, *, axis: Axes = None, keepdims: bool = False, ord: int | float = 2) -> Array:
    """Computes the vector norm of a vector (or batch of vectors) x.

    Parameters
    ----------
    x : Array
        Input array; should have a floating-point data type.
    axis : int | tuple of ints | None
        Axis (or axes) along which to compute the norms (negative counts from
        the last); None: over all the values of x. Default: None.
    keepdims : bool
        Whether to keep the reduced axes as singleton dimensions. Default: False.
    ord : int | float
        Order of the norm: 2 (Euclidean), 1, inf (max |x_i|), p >= 1
        (sum(|x_i|**p)**(1/p)); and the non-norms 0 (number of non-zero
        elements), -inf (min |x_i|) and other p < 1, with the same formula.
        Default: 2.

    Returns
    -------
    out : Array
        The norms, of x's real floating-point dtype. Over zero elements every
        ord gives 0 except -inf and negative p, which give inf.

    Raises
    ------
    TypeError
        x not an array, or not of a floating-point dtype.
    ValueError
        An ord that is not a real number (or is NaN), an axis out of bounds, or
        a repeated axis.
    """
    name = "linalg.vector_norm"
    node = node_of(x, name)
    check_dtype(node, "floating", name)
    p = _real_number(ord)
    if p is None or math.isnan(p):
        raise ValueError(f"{name}: ord must be a real number or +-inf, got {ord!r}")
    axes = normalize_axes(axis, len(node.shape), name)
    # Computed in the accumulator dtype: squares of float16 values above 256 overflow float16.
    wide = astype_node(node, dt.accumulator(node.dtype))
    return wrap(astype_node(_vector_norm(wide, axes, bool(keepdims), p, name), dt.real_dtype(node.dtype)))


def _vector_norm(node, axes, keepdims, p, name):
    real = dt.real_dtype(node.dtype)
    count = 1
    for a in axes:
        count *= node.shape[a]
    if p in (math.inf, -math.inf):
        if count == 0:
            # max/min over no values: the identities of the norms (0 for inf, inf for -inf).
            return full_node(reduced_shape(node.shape, axes, keepdims), 0.0 if p > 0 else math.inf, real, node.device)
        return _reduce("max" if p > 0 else "min", make(P["abs"], (node,)), axes, keepdims)
    if p == 0:
        nonzero = make(P["not_equal"], (node, scalar_node(0, node.dtype, node.device, name)))
        return _reduce("sum", astype_node(nonzero, real), axes, keepdims)
    if p == 1:
        return _reduce("sum", make(P["abs"], (node,)), axes, keepdims)
    if p == 2:
        if len(node.shape) == 1 and not keepdims and node.dtype.kind == "f" and not _realized_data(node):
            # A computed real vector: its dot with itself, one node instead of a product and its
            # sum (the scheduler rewrites that sum into this dot; realized data may be a strided
            # view, which the rewrite leaves to the fused sum). Its sqrt needs no zero-safe form:
            # autodiff differentiates sqrt(x @ x) as the norm (autodiff.composite_rules).
            return make(P["sqrt"], (make(P["matmul"], (node, node)),))
        return _sqrt_safe(_reduce("sum", _abs_squared(node), axes, keepdims))
    exponent = scalar_node(p, real, node.device, name)
    # |x|**p at x = 0 is 0 (p > 0) or inf (p < 0); zero_safe gives it gradient 0, not NaN.
    powered = _zero_safe(make(P["abs"], (node,)), 0.0 if p > 0 else math.inf,
                         lambda n: make(P["pow"], (n, exponent)))
    total = _reduce("sum", powered, axes, keepdims)
    return make(P["pow"], (total, scalar_node(1.0 / p, real, node.device, name)))
