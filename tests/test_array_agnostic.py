"""Array-agnostic library code (scikit-learn/SciPy style) runs on arrayx.

Each function below is written once against `array_api_compat.array_namespace`
and never names a library; it runs on NumPy arrays (through array-api-compat's
NumPy wrapper) and on arrayx arrays, and the results must agree. Tolerances:
the same float64 algorithms run on both sides, but arrayx may order reductions
and BLAS calls differently; 1e-10 relative covers that for these well-conditioned
problems (condition numbers below 1e3).
"""

import numpy as np
import pytest
from array_api_compat import array_namespace, device, size

import arrayx as xp

TOL = dict(rtol=1e-10, atol=1e-12)


def standard_scale(X):
    ns = array_namespace(X)
    mean = ns.mean(X, axis=0)
    std = ns.std(X, axis=0, correction=1)
    return (X - mean) / ns.where(std == 0, ns.ones_like(std), std)


def ridge(X, y, alpha):
    ns = array_namespace(X, y)
    n_features = X.shape[1]
    gram = ns.matrix_transpose(X) @ X + alpha * ns.eye(n_features, dtype=X.dtype, device=device(X))
    return ns.linalg.solve(gram, ns.matrix_transpose(X) @ y)


def pca(X, n_components):
    ns = array_namespace(X)
    centered = X - ns.mean(X, axis=0)
    _, s, vh = ns.linalg.svd(centered, full_matrices=False)
    # sign convention (sklearn's svd_flip): the largest |component| is positive
    rows = ns.argmax(ns.abs(vh), axis=1)
    signs = ns.sign(ns.take_along_axis(vh, rows[:, None], axis=1))
    vh = vh * signs
    return vh[:n_components, :], s[:n_components] ** 2 / (X.shape[0] - 1)


def softmax_cross_entropy(logits, labels):
    ns = array_namespace(logits)
    shifted = logits - ns.max(logits, axis=1, keepdims=True)
    log_prob = shifted - ns.log(ns.sum(ns.exp(shifted), axis=1, keepdims=True))
    picked = ns.take_along_axis(log_prob, labels[:, None], axis=1)
    return -ns.mean(picked)


def kmeans_step(X, centers):
    ns = array_namespace(X, centers)
    dist = ns.sum((X[:, None, :] - centers[None, :, :]) ** 2, axis=2)
    assign = ns.argmin(dist, axis=1)
    members = ns.astype(assign[:, None] == ns.arange(centers.shape[0], device=device(X))[None, :], X.dtype)
    counts = ns.sum(members, axis=0)
    return (ns.matrix_transpose(members) @ X) / counts[:, None], assign


def nonzero_features(X):
    """Data-dependent shapes: the columns with any nonzero entry, their values unique-sorted."""
    ns = array_namespace(X)
    (cols,) = ns.nonzero(ns.any(X != 0, axis=0))
    return cols, ns.unique_values(X[:, cols])


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5))
    X[:, 3] = 0.0
    y = X @ np.arange(1.0, 6.0) + 0.1 * rng.standard_normal(40)
    labels = rng.integers(0, 5, size=40)
    return X, y, labels


def run_both(fn, *args):
    """fn on NumPy inputs and on arrayx inputs; results as NumPy arrays."""
    import array_api_compat.numpy as np_compat
    np_args = [np_compat.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    x_args = [xp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    assert all(array_namespace(a) is xp for a in x_args if isinstance(a, xp.Array))
    expected, got = fn(*np_args), fn(*x_args)
    if not isinstance(expected, tuple):
        expected, got = (expected,), (got,)
    for g in got:
        assert isinstance(g, xp.Array)
    return [np.asarray(e) for e in expected], [np.asarray(g) for g in got]


@pytest.mark.parametrize("fn, args", [
    (standard_scale, lambda X, y, labels: (X,)),
    (ridge, lambda X, y, labels: (X, y, 0.5)),
    (pca, lambda X, y, labels: (X, 3)),
    (softmax_cross_entropy, lambda X, y, labels: (X, labels)),
    (kmeans_step, lambda X, y, labels: (X, X[:4].copy())),
    (nonzero_features, lambda X, y, labels: (X,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_array_agnostic_function_matches_numpy(data, fn, args):
    expected, got = run_both(fn, *args(*data))
    for e, g in zip(expected, got):
        assert e.shape == g.shape and e.dtype == g.dtype
        np.testing.assert_allclose(g, e, **TOL)


def test_array_api_compat_helpers_see_an_arrayx_array():
    x = xp.reshape(xp.arange(6.0), (2, 3))
    assert array_namespace(x) is xp
    assert size(x) == 6
    assert device(x) == x.device == xp.__array_namespace_info__().default_device()
    with pytest.raises(TypeError):
        array_namespace(x, np.ones(3))   # mixing libraries is an error, not a silent conversion
