"""VJP rules for the linear-algebra primitives (registered in `registry.VJP`).

Real floating inputs only (autodiff rejects complex ones before the sweep).
Every rule builds its cotangent from namespace functions (`xp.linalg.solve`,
`inv`, `eigh`, `svd`, matmul, `.mT`, `eye`, `tril`, `where`), so gradients
are graph nodes like the rest. Multi-output primitives (qr, svd, eigh,
slogdet) receive a list of cotangents, one per output, None where unused.

Where each rule holds:

- inv, det, slogdet: nonsingular x. det and slogdet use inv(x): for an
  exactly singular x evaluating the gradient raises LinAlgError (naming
  linalg.inv), although det's true gradient there, the adjugate, exists;
  nearly singular x gives a correspondingly inaccurate gradient. slogdet
  differentiates logabsdet only: sign is piecewise constant (no cotangent).
- solve: nonsingular x1; both operands, the 1-D x2 case, batch broadcasting.
- cholesky (lower and upper): the standard formula
  x̄ = sym(L^-T Φ(L^T L̄) L^-1), Φ = lower triangle with the diagonal halved.
- eigh, eigvalsh, cholesky: the executor reads one triangle of x (LAPACK),
  but x is meant to be symmetric: the cotangent returned is the symmetric
  one, the gradient along symmetric perturbations. Differentiate a symmetric
  parameterization (x = b + b.mT, b @ b.mT, ...) and the chain rule is exact.
- eigh: eigenvalue cotangents always; eigenvector cotangents need distinct
  eigenvalues (the factor 1/(w_j - w_i) is infinite for repeated ones, and so
  is the true derivative of the eigenvectors). Losses must be invariant under
  each eigenvector's sign (the gauge), e.g. functions of v * v or v diag(f(w)) v^T.
- svd, svdvals: singular-value cotangents always (U diag(S̄) Vh); U and Vh
  cotangents need distinct, nonzero singular values (1/(s_j^2 - s_i^2) and
  1/s factors) and sign-invariant losses (e.g. (U * S) @ Vh, U diag(f(S)) Vh).
  full_matrices=True with M != N: the extra M - N columns of U (N - M rows of
  Vh) are an arbitrary orthonormal basis of a complement and have no
  derivative, so a cotangent reaching that non-square factor raises
  ValueError (use full_matrices=False); S and the square factor work.
- qr: mode 'reduced' (and 'complete' with M <= N, the same factorization) for
  full-rank x, any M and N (M < N splits x = [X | Y] with square X). mode
  'complete' with M > N: Q's extra M - N columns are arbitrary, so a Q
  cotangent raises ValueError (R's works: its extra rows are zero).
- pinv: the Golub-Pereyra derivative, exact where the rank is locally
  constant (full rank, with rtol cutting no singular value).
- eig, eigvals: deliberately not differentiable. Their outputs are complex,
  and the sweep sends no cotangent into complex nodes (a real loss built
  through `real`/`abs` of them gets zero gradient from that path).
"""

from .. import dtypes as dt, linalg as la
from ..namespace import elementwise as ew, manipulation as manip
from ..namespace.build import P, make, wrap
from ..namespace.creation import eye, tril, triu, zeros
from .registry import arg, out, rule


# --- helpers ---------------------------------------------------------------

def _outputs(node):
    """The outputs of a multi-output node as Arrays (fresh `select` nodes)."""
    return tuple(wrap(make(P["select"], (node,), (i,))) for i in range(len(node.shape)))


def _matrix(v):
    """A batch of scalars (...) as (..., 1, 1)."""
    return manip.expand_dims(manip.expand_dims(v, axis=-1), axis=-1)


def _column(v):
    return manip.expand_dims(v, axis=-1)


def _row(v):
    return manip.expand_dims(v, axis=-2)


def _eye_mask(n, like):
    return eye(n, dtype=dt.bool, device=like.device)


def _diag(v):
    """(..., n) -> (..., n, n) with v on the diagonal."""
    return ew.where(_eye_mask(v.shape[-1], v), _row(v), 0.0)


def _sym(x):
    return (x + x.mT) * 0.5


def _inverse_gaps(w):
    """F[..., i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it (infinite for repeated w)."""
    on_diag = _eye_mask(w.shape[-1], w)
    gaps = _row(w) - _column(w)
    return ew.where(on_diag, 0.0, 1.0 / ew.where(on_diag, 1.0, gaps))


def _times_inverse_transpose(x, r):
    """x @ r^-T for square r: solve(r, x^T)^T."""
    return la.solve(r, x.mT).mT


# --- inverses, determinants, systems ---------------------------------------

@rule("inv")
def _inv(g, node, needs):
    y = out(node)
    return (-(y.mT @ g @ y.mT),)


@rule("det")
def _det(g, node, needs):
    # g * det(x) * inv(x)^T. For an exactly singular x inv fails: evaluating
    # the gradient raises LinAlgError (naming linalg.inv), though the true
    # gradient there is the transposed adjugate.
    return (_matrix(g * out(node)) * la.inv(arg(node, 0)).mT,)


@rule("slogdet")
def _slogdet(gs, node, needs):
    # Only logabsdet carries a cotangent (sign is piecewise constant):
    # d logabsdet = inv(x)^T; singular x: as for det.
    g = gs[1]
    if g is None:
        return (None,)
    return (_matrix(g) * la.inv(arg(node, 0)).mT,)


@rule("solve")
def _solve(g, node, needs):
    # x = a^-1 b: b̄ = a^-T ḡ, ā = -b̄ x^T, both in the broadcast batch shape
    # (the sweep sums them back to each operand's shape).
    a, b = arg(node, 0), arg(node, 1)
    x = out(node)
    if b.ndim == 1:
        # One vector b for every matrix in a: g and x are (..., M).
        gb = la.solve(a.mT, _column(g))                # (..., M, 1)
        return (-(gb * _row(x)) if needs[0] else None,
                manip.squeeze(gb, axis=-1) if needs[1] else None)
    gb = la.solve(a.mT, g)
    return -(gb @ x.mT) if needs[0] else None, gb if needs[1] else None


# --- factorizations --------------------------------------------------------

@rule("cholesky")
def _cholesky(g, node, needs):
    c = out(node)
    # upper: x = U^T U with U = L^T, and Ū = L̄^T.
    lower, g_lower = (c.mT, g.mT) if node.attrs[0] else (c, g)
    n = lower.shape[-1]
    half_diagonal = 1.0 - 0.5 * eye(n, dtype=g.dtype, device=g.device)
    phi = tril(lower.mT @ g_lower) * half_diagonal
    left = la.solve(lower.mT, phi)                    # L^-T Φ
    return (_sym(la.solve(lower.mT, left.mT).mT),)    # L^-T Φ L^-1, symmetrized


@rule("eigh")
def _eigh(gs, node, needs):
    gw, gv = gs
    w, v = _outputs(node)
    inner = None if gw is None else _diag(gw)
    if gv is not None:
        # Needs distinct eigenvalues (F is infinite for repeated ones).
        rotation = _inverse_gaps(w) * (v.mT @ gv)
        inner = rotation if inner is None else inner + rotation
    return (_sym(v @ inner @ v.mT),)


@rule("eigvalsh")
def _eigvalsh(g, node, needs):
    # v diag(g) v^T with the eigenvectors of a second (eigh) node; eigvalsh
    # and eigh order the eigenvalues the same way (ascending).
    v = la.eigh(arg(node, 0)).eigenvectors
    return ((v * _row(g)) @ v.mT,)


@rule("svdvals")
def _svdvals(g, node, needs):
    u, _, vh = la.svd(arg(node, 0), full_matrices=False)
    return ((u * _row(g)) @ vh,)


@rule("svd")
def _svd(gs, node, needs):
    gu, gs_, gvh = gs
    x = arg(node, 0)
    m, n = x.shape[-2:]
    k = min(m, n)
    u, s, vh = _outputs(node)
    if node.attrs[0] and m != n:
        # full_matrices=True: the non-square factor's extra vectors are an
        # arbitrary basis of a complement, with no derivative.
        if m > n and gu is not None:
            raise ValueError(f"linalg.svd: cannot differentiate through U of full_matrices=True when M > N "
                             f"(x has shape {x.shape}): its last {m - n} columns are an arbitrary orthonormal "
                             f"basis with no derivative; use full_matrices=False")
        if n > m and gvh is not None:
            raise ValueError(f"linalg.svd: cannot differentiate through Vh of full_matrices=True when N > M "
                             f"(x has shape {x.shape}): its last {n - m} rows are an arbitrary orthonormal "
                             f"basis with no derivative; use full_matrices=False")
        u, vh = u[..., :, :k], vh[..., :k, :]
    v = vh.mT
    gv = None if gvh is None else gvh.mT
    inner = None if gs_ is None else _diag(gs_)
    if gu is not None or gv is not None:
        # Needs distinct singular values: F[i, j] = 1 / (s_j^2 - s_i^2).
        f = _inverse_gaps(s * s)
        terms = []
        if gu is not None:
            j = u.mT @ gu
            terms.append((f * (j - j.mT)) * _row(s))       # (F ∘ (U^T Ū - Ū^T U)) S
        if gv is not None:
            j = v.mT @ gv
            terms.append(_column(s) * (f * (j - j.mT)))    # S (F ∘ (V^T V̄ - V̄^T V))
        for t in terms:
            inner = t if inner is None else inner + t
    result = u @ inner @ vh
    if (gu is not None and m > k) or (gv is not None and n > k):
        # Components outside the singular subspaces; 1/s needs s != 0.
        zero = s == 0.0
        s_inv = ew.where(zero, 0.0, 1.0 / ew.where(zero, 1.0, s))
        if gu is not None and m > k:
            result = result + ((gu - u @ (u.mT @ gu)) * _row(s_inv)) @ vh       # (I - UU^T) Ū S^-1 V^T
        if gv is not None and n > k:
            result = result + (u * _row(s_inv)) @ (gv.mT - (gv.mT @ v) @ vh)   # U S^-1 V̄^T (I - VV^T)
    return (result,)


def _qr_tall(q, r, gq, gr):
    """Cotangent of x = q r, q (..., M, N) orthonormal columns, r (..., N, N) upper triangular.

    x̄ = (Q̄ + Q copyltu(M)) R^-T with M = R̄ R^T - Q^T Q̄ and copyltu(M) the
    symmetric matrix with M's upper triangle.
    """
    m = None
    if gr is not None:
        m = gr @ r.mT
    if gq is not None:
        qtgq = q.mT @ gq
        m = -qtgq if m is None else m - qtgq
    b = q @ (triu(m) + triu(m, k=1).mT)
    if gq is not None:
        b = b + gq
    return _times_inverse_transpose(b, r)


@rule("qr")
def _qr(gs, node, needs):
    gq, gr = gs
    x = arg(node, 0)
    m, n = x.shape[-2:]
    q, r = _outputs(node)
    if node.attrs[0] == "complete" and m > n:
        if gq is not None:
            raise ValueError(f"linalg.qr: cannot differentiate through Q of mode='complete' when M > N "
                             f"(x has shape {x.shape}): its last {m - n} columns are an arbitrary orthonormal "
                             f"basis with no derivative; use mode='reduced'")
        # R's last M - N rows are zero: only its top N rows depend on x.
        q, r, gr = q[..., :, :n], r[..., :n, :], gr[..., :n, :]
    if m >= n:
        return (_qr_tall(q, r, gq, gr),)
    # M < N: x = [X | Y] with X square, R = [U | V], X = Q U and Y = Q V.
    # V = Q^T Y adds Y V̄^T to Q's cotangent; Ȳ = Q V̄.
    y = x[..., :, m:]
    gu = None if gr is None else gr[..., :, :m]
    gv = None if gr is None else gr[..., :, m:]
    if gv is not None:
        extra = y @ gv.mT
        gq = extra if gq is None else gq + extra
    gx = _qr_tall(q, r[..., :, :m], gq, gu)
    gy = zeros(y.shape, dtype=y.dtype, device=y.device) if gv is None else q @ gv
    return (manip.concat([gx, gy], axis=-1),)


@rule("pinv")
def _pinv(g, node, needs):
    # Golub-Pereyra, for locally constant rank (full rank, rtol cutting no
    # singular value). With X = pinv(A) and Ḡ = g:
    # Ā = -X^T Ḡ X^T + (I - A X) Ḡ^T X X^T + X^T X Ḡ^T (I - X A).
    a, x = arg(node, 0), out(node)
    gt = g.mT
    right = gt @ (x @ x.mT)
    left = (x.mT @ x) @ gt
    return (-(x.mT @ g @ x.mT) + (right - a @ (x @ right)) + (left - (left @ x) @ a),)
