"""Client workloads of an array-API library: NumPy, array-api-strict and arrayx, measured interleaved in one run.

    python benchmarks/clients.py                         # every workload and size, a few minutes on 2 cores
    python benchmarks/clients.py --quick                 # fewer rounds
    python benchmarks/clients.py --sizes small,medium    # size classes to run

The workloads are code written against the array API standard by others or
as others write it: scikit-learn estimators and metrics with
`array_api_dispatch=True`, SciPy functions that dispatch on array-API arrays,
k-means, power iteration, conjugate gradients, a loop that reads a value every
step, and 20 SGD steps of a 784-128-10 MLP (gradients from
`arrayx.autodiff.grad` in arrayx, eager and `arrayx.jit`-compiled; written by
hand for NumPy and array-api-strict). Each runs in three size classes: small
(up to ~1e5 elements), medium (1e5 to 1e7), large (1e7 and up). Every call
ends in `np.asarray`, so arrayx's lazy work is forced and timed.

Each row gives NumPy's median time and the speedups numpy/arrayx and
numpy/array-api-strict (higher is faster; each is the median over rounds of
the ratio measured in the same round, so drift cancels), then the geometric
mean of each per size class. Every result is checked against NumPy's before
it is timed; a mismatch stops the run. Inputs are converted to each namespace
before timing. Nothing here asserts a timing.

The three namespaces make the same BLAS and LAPACK calls. Where waking
OpenBLAS's threads is slow (seen on a 2-vCPU VM: 1000x1000 power iteration
took 1.3 ms or 160 ms from call to call, in every namespace), those calls
measure the wake-ups and hide the rest; OPENBLAS_NUM_THREADS=1 gives steady
rows there.

At the medium sizes a call's time also depends on whether its large
temporaries get new pages from the system, which depends on what ran before
it in the process: docs/benchmarks.md has the same rows with each library
alone in a process of its own.

Last come issue 23's single-pattern targets and the medium rows' bounds on
this machine: the share of NumPy's time taken by the BLAS and LAPACK calls
arrayx makes too (arrayx can be at most 1 / share faster there).
"""

import argparse
import math
import os
import statistics
import sys
import time
import warnings
from dataclasses import dataclass
from functools import partial
from typing import Callable

# SciPy reads this when it is imported, and scikit-learn's array API dispatch refuses to run without it.
os.environ["SCIPY_ARRAY_API"] = "1"

import array_api_strict  # noqa: E402
import numpy as np  # noqa: E402
import scipy.special  # noqa: E402
import scipy.stats  # noqa: E402
import sklearn  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.metrics import r2_score  # noqa: E402
from sklearn.metrics.pairwise import rbf_kernel  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402  (scikit-learn's dependency)

# Benchmark the checkout this script lives in, not an installed copy.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import arrayx  # noqa: E402
from arrayx.autodiff import grad  # noqa: E402

# NumPy goes through the same dispatching code as the others (sklearn takes its NumPy branches where it has them).
sklearn.set_config(array_api_dispatch=True)
# StandardScaler divides 0 by 0 on purpose when it starts its running mean (under np.errstate for NumPy only).
warnings.filterwarnings("ignore", "invalid value encountered in divide", RuntimeWarning, "array_api_strict")

NAMESPACES = {"numpy": np, "strict": array_api_strict, "arrayx": arrayx}
ARRAY_TYPES = {xp: type(xp.asarray(0.0)) for xp in NAMESPACES.values()}
CLASSES = ("small", "medium", "large")


def to_host(xp, result):
    """`result` as NumPy, after checking it is an array of `xp`: a client that
    converted to NumPy behind our back (SciPy does for arrays it does not
    know) fails here instead of being timed as if it ran in `xp`."""
    if not isinstance(result, ARRAY_TYPES[xp]):
        raise TypeError(f"expected a {ARRAY_TYPES[xp].__name__}, got a {type(result).__name__}")
    return np.asarray(result)


# scikit-learn: each supports array_api_dispatch in 1.9 (checked: each runs on
# arrayx arrays end to end, converting none of them to NumPy on the way).
# Each takes X, integer class labels (int64; int32 and float labels work too)
# and a float target.

def pca(xp, X, labels, target):
    return to_host(xp, PCA(n_components=5, svd_solver="full").fit_transform(X))


def standard_scaler(xp, X, labels, target):
    return to_host(xp, StandardScaler().fit_transform(X))


def lda(xp, X, labels, target):
    return to_host(xp, LinearDiscriminantAnalysis().fit(X, labels).predict(X))


def ridge(xp, X, labels, target):
    return to_host(xp, Ridge(solver="svd", alpha=1.0).fit(X, target).coef_)


def rbf(xp, X):
    # Through euclidean_distances, which zeroes the diagonal with a Python loop of X[i, i] = 0 outside NumPy.
    return to_host(xp, rbf_kernel(X))


def r2(xp, truth, predicted):
    return to_host(xp, r2_score(truth, predicted, multioutput="raw_values"))


def table(rng, n, d):
    """n samples of d features with distinct variances (PCA's components are
    well separated), 3 classes that shift the mean (LDA), and a noisy linear
    target (Ridge)."""
    labels = rng.integers(0, 3, n)
    X = rng.standard_normal((n, d)) * np.linspace(3.0, 0.5, d) + 0.5 * labels[:, None]
    return X, labels, X @ rng.standard_normal(d) + rng.standard_normal(n)


def points(rng, n, d):
    return (rng.standard_normal((n, d)),)


def regression_outputs(rng, n, d):
    truth = rng.standard_normal((n, d))
    return truth, truth + 0.3 * rng.standard_normal((n, d))


# SciPy. Checked as for scikit-learn: all three run on arrayx arrays (none
# was dropped; scipy.stats.moment and skew do too).

def logsumexp(xp, x):
    return to_host(xp, scipy.special.logsumexp(x, axis=-1))


def softmax(xp, x):
    return to_host(xp, scipy.special.softmax(x, axis=-1))


def zscore(xp, x):
    return to_host(xp, scipy.stats.zscore(x, axis=-1))


# Algorithms written against the standard.

K, LLOYD_STEPS, POWER_STEPS, CG_STEPS, READ_STEPS = 8, 10, 20, 20, 200


def kmeans(xp, X):
    """Lloyd's iterations from the first K points: each point to its nearest
    center (argmin of squared distances), each center to its points' mean (a
    one-hot matmul)."""
    centers = X[:K, :]
    x_norms = xp.sum(X * X, axis=1, keepdims=True)
    for _ in range(LLOYD_STEPS):
        distances = x_norms - 2.0 * (X @ centers.T) + xp.sum(centers * centers, axis=1)
        nearest = xp.argmin(distances, axis=1)
        one_hot = xp.astype(nearest[:, None] == xp.arange(K), X.dtype)
        counts = xp.sum(one_hot, axis=0)
        centers = (one_hot.T @ X) / xp.maximum(counts, 1.0)[:, None]
    return to_host(xp, centers)


def power_iteration(xp, A):
    v = xp.ones(A.shape[0], dtype=A.dtype) / math.sqrt(A.shape[0])
    for _ in range(POWER_STEPS):
        w = A @ v
        v = w / xp.linalg.vector_norm(w)
    return to_host(xp, v)


def conjugate_gradient(xp, A, b):
    x = xp.zeros_like(b)
    r = p = b
    rs = xp.vecdot(r, r)
    for _ in range(CG_STEPS):
        Ap = A @ p
        alpha = rs / xp.vecdot(p, Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_next = xp.vecdot(r, r)
        if float(rs_next) < 1e-30:   # the convergence test real code reads every step (never true here)
            break
        p = r + (rs_next / rs) * p
        rs = rs_next
    return to_host(xp, x)


def read_each_step(xp, y):
    """A scalar-driven loop: update 10 elements, read one back to Python every step."""
    reads = []
    for _ in range(READ_STEPS):
        y = y * 0.5 + 1.0
        reads.append(float(y[0]))
    return to_host(xp, y), np.asarray(reads)


def vector(rng, n):
    return (rng.uniform(0.0, 1.0, n),)


def matrix(rng, n):
    # Nonnegative entries: a dominant eigenvalue far above the rest, so power iteration settles.
    return (rng.uniform(0.0, 1.0, (n, n)),)


def spd_system(rng, n):
    """A symmetric matrix with eigenvalues in about [0.5, 2.5] * sqrt(2n) (a
    shifted Wigner matrix): condition ~5, so 20 CG steps reduce the residual by
    ~1e-8 and stay far from rounding."""
    G = rng.standard_normal((n, n))
    A = (G + G.T) / 2 + 1.5 * math.sqrt(2 * n) * np.eye(n)
    return A, rng.standard_normal(n)


def clusters(rng, n, d):
    """n points around K centers."""
    centers = rng.uniform(-5.0, 5.0, (K, d))
    return (centers[rng.integers(0, K, n)] + rng.standard_normal((n, d)),)


# The MLP: 784-128-10, ReLU, softmax cross-entropy, no biases, float32.

MLP_STEPS, LR = 20, 0.1


def mlp_loss(xp, w1, w2, x, y):
    z = xp.maximum(x @ w1, 0.0) @ w2
    top = xp.max(z, axis=1, keepdims=True)
    lse = top + xp.log(xp.sum(xp.exp(z - top), axis=1, keepdims=True))
    return xp.mean(xp.sum(y * (lse - z), axis=1))


def sgd_by_hand(xp, w1, w2, x, y):
    """One SGD step with mlp_loss's backward pass written out."""
    pre = x @ w1
    h = xp.maximum(pre, 0.0)
    z = h @ w2
    e = xp.exp(z - xp.max(z, axis=1, keepdims=True))
    dz = (e / xp.sum(e, axis=1, keepdims=True) - y) / x.shape[0]
    dh = xp.where(pre > 0, dz @ w2.T, 0.0)
    return w1 - LR * (x.T @ dh), w2 - LR * (h.T @ dz)


mlp_grad = grad(partial(mlp_loss, arrayx), argnums=(0, 1))


def sgd_autodiff(w1, w2, x, y):
    g1, g2 = mlp_grad(w1, w2, x, y)
    return w1 - LR * g1, w2 - LR * g2


sgd_jit = arrayx.jit(sgd_autodiff)


def train(xp, step, w1, w2, xs, ys):
    for i in range(MLP_STEPS):
        w1, w2 = step(w1, w2, xs[i, ...], ys[i, ...])
    return to_host(xp, w1), to_host(xp, w2)


def mlp_by_hand(xp, *inputs):
    return train(xp, partial(sgd_by_hand, xp), *inputs)


def mlp_autodiff(xp, *inputs):
    return train(xp, sgd_autodiff, *inputs)


def mlp_jit(xp, *inputs):
    return train(xp, sgd_jit, *inputs)


def library_share(whole, library, rounds):
    """The share of the NumPy call `whole()` spent in `library()`, the BLAS
    or LAPACK calls it makes on the same operands and layouts, which arrayx
    makes too: where those calls cost what they cost here, an arrayx call
    can be at most 1 / share times faster than NumPy's, however little its
    other work costs. Measured as CPU time of this process with BLAS on one
    thread, the two interleaved (median of rounds): other processes on a
    shared machine do not count in it, as they do in wall time. BLAS on more
    free cores takes a smaller share (the calls spread, the rest does not),
    so there the bound is looser."""
    with threadpool_limits(limits=1, user_api="blas"):
        count = max(1, round(0.01 / max(timed(whole)[1], 1e-9)))
        shares = []
        for _ in range(rounds):
            seconds = []
            for call in (whole, library):
                t0 = time.process_time()
                for _ in range(count):
                    call()
                seconds.append(time.process_time() - t0)
            shares.append(seconds[1] / seconds[0])
    return statistics.median(shares)


def gemm_share(batch, rounds):
    """The share of the hand-written NumPy SGD step (sgd_by_hand) spent in
    its five GEMMs (see library_share)."""
    w1, w2, xs, ys = mlp_data(np.random.default_rng(0), batch)
    x, y = xs[0], ys[0]
    pre = x @ w1
    h = np.maximum(pre, 0.0)
    dz, dh = h @ w2, pre.copy()   # the backward pass's operands, of their shapes and layouts

    def gemms():
        return x @ w1, h @ w2, dz @ w2.T, x.T @ dh, h.T @ dz
    return library_share(partial(sgd_by_hand, np, w1, w2, x, y), gemms, rounds)


def medium_library_shares(rounds):
    """{workload's name: share} for the medium rows whose BLAS or LAPACK calls
    NumPy's time is mostly made of (see library_share): scikit-learn's PCA
    and Ridge with the SVD solver factor the centered 100000x20 table, power
    iteration and CG multiply the 1000x1000 matrix by a vector 20 times.
    (LDA's SVD of the table takes about 0.4 of its time: not bound.)"""
    X, labels, target = table(np.random.default_rng(0), *TABLES["medium"])
    centered = X - X.mean(axis=0)

    def svd():
        return np.linalg.svd(centered, full_matrices=False)
    (A,) = matrix(np.random.default_rng(0), *SQUARES["medium"])
    S, b = spd_system(np.random.default_rng(0), *SQUARES["medium"])

    def products(M, v, steps):
        return lambda: [M @ v for _ in range(steps)]
    bound = [(pca, (X, labels, target), svd), (ridge, (X, labels, target), svd),
             (power_iteration, (A,), products(A, A[:, 0], POWER_STEPS)),
             (conjugate_gradient, (S, b), products(S, b, CG_STEPS))]
    names = {w.fn: w.name for w in WORKLOADS}
    return {names[fn]: library_share(partial(fn, np, *inputs), library, rounds) for fn, inputs, library in bound}


def mlp_data(rng, batch):
    """Initial weights and MLP_STEPS batches of inputs and one-hot labels."""
    w1 = rng.standard_normal((784, 128)) * 0.05
    w2 = rng.standard_normal((128, 10)) * 0.05
    xs = rng.standard_normal((MLP_STEPS, batch, 784))
    ys = np.eye(10)[rng.integers(0, 10, (MLP_STEPS, batch))]
    return tuple(a.astype(np.float32) for a in (w1, w2, xs, ys))


@dataclass
class Workload:
    name: str
    fn: Callable            # fn(xp, *inputs) -> a NumPy array or a tuple of them
    inputs: Callable        # inputs(rng, *size) -> a tuple of NumPy arrays
    sizes: dict             # size class -> size arguments of `inputs`
    rtol: float
    atol: float = 0.0
    arrayx_fn: Callable = None   # what arrayx runs instead of fn
    strict: bool = True          # False: array-api-strict has no counterpart (jit)


# float64 tolerances: the three run the same LAPACK and BLAS calls, but
# arrayx's fused reductions sum in a different order (blocks over threads),
# ~1e-16 relative per sum, amplified by the SVDs and solves of these
# well-conditioned inputs to at most ~1e-13 on values of order 1 (measured);
# 1e-9 leaves room and still catches any real error. float32 (the MLP): a
# step's sums differ by ~1e-7 relative and autodiff's backward pass orders its
# operations differently from the hand-written one; after 20 steps the weights
# (~0.05) differ by ~4e-8.
F64 = dict(rtol=1e-9, atol=1e-9)
TABLES = {"small": (2000, 20), "medium": (100_000, 20), "large": (500_000, 20)}
GRIDS = {"small": (100, 100), "medium": (1000, 1000), "large": (10_000, 1000)}
SQUARES = {"small": (100,), "medium": (1000,), "large": (3163,)}
MLP = dict(inputs=mlp_data, sizes={"small": (16,), "medium": (256,)}, rtol=1e-4, atol=1e-6)

WORKLOADS = [
    Workload("sklearn PCA(5, full).fit_transform", pca, table, TABLES, **F64),
    Workload("sklearn StandardScaler.fit_transform", standard_scaler, table, TABLES, **F64),
    Workload("sklearn LDA.fit(X, y).predict(X)", lda, table, TABLES, rtol=0),
    Workload("sklearn Ridge(svd).fit(X, y).coef_", ridge, table, TABLES, **F64),
    # Its size classes count the n x n result; NumPy takes ~0.1 s at the largest n.
    Workload("sklearn rbf_kernel(X)", rbf, points, {"small": (300, 20), "medium": (1000, 20), "large": (3163, 20)},
             **F64),
    Workload("sklearn r2_score(raw_values)", r2, regression_outputs, TABLES, **F64),
    Workload("scipy.special.logsumexp(axis=-1)", logsumexp, points, GRIDS, **F64),
    Workload("scipy.special.softmax(axis=-1)", softmax, points, GRIDS, **F64),
    Workload("scipy.stats.zscore(axis=-1)", zscore, points, GRIDS, **F64),
    Workload(f"k-means, {LLOYD_STEPS} Lloyd steps, k={K}", kmeans, clusters,
             {"small": (2000, 10), "medium": (100_000, 10), "large": (1_000_000, 10)}, **F64),
    Workload(f"power iteration, {POWER_STEPS} steps", power_iteration, matrix, SQUARES, **F64),
    Workload(f"conjugate gradient, {CG_STEPS} steps", conjugate_gradient, spd_system, SQUARES, **F64),
    Workload(f"y = y*c + d; float(y[0]), {READ_STEPS} steps", read_each_step, vector,
             {"small": (10,)}, rtol=1e-15),
    Workload(f"MLP 784-128-10, {MLP_STEPS} SGD steps", mlp_by_hand, arrayx_fn=mlp_autodiff, **MLP),
    Workload(f"MLP 784-128-10, {MLP_STEPS} SGD steps, jit", mlp_by_hand, arrayx_fn=mlp_jit, strict=False, **MLP),
]


def timed(fn):
    t0 = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - t0


def interleaved(calls, counts, rounds):
    """Per-round seconds per call of each call, round-robin within each round."""
    samples = [[] for _ in calls]
    for _ in range(rounds):
        for call, count, out in zip(calls, counts, samples):
            t0 = time.perf_counter()
            for _ in range(count):
                call()
            out.append((time.perf_counter() - t0) / count)
    return samples


def check(name, got, want, rtol, atol):
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        assert g.dtype == w.dtype, f"{name}: dtype {g.dtype}, NumPy gives {w.dtype}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=name)


def fmt_time(seconds):
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def measure(workload, size_class, rounds, target):
    """The shape of the largest input, NumPy's median time and {namespace:
    speedup over NumPy} for one workload at one size."""
    host = workload.inputs(np.random.default_rng(0), *workload.sizes[size_class])
    calls = {}
    for label, xp in NAMESPACES.items():
        if label == "strict" and not workload.strict:
            continue
        fn = workload.arrayx_fn if label == "arrayx" and workload.arrayx_fn else workload.fn
        # arrayx.asarray copies host data into a realized array here, so no conversion is left to the timed calls.
        inputs = [xp.asarray(a) for a in host]
        calls[label] = partial(fn, xp, *inputs)
    firsts = {label: timed(call) for label, call in calls.items()}   # also warms arrayx's plan cache
    for label, (result, _) in firsts.items():
        check(f"{workload.name} [{size_class}] {label}", result, firsts["numpy"][0], workload.rtol, workload.atol)
    # Batch sizes from a second call: the first also builds arrayx's plans,
    # and a batch sized by it would time single, cold calls.
    seconds = [timed(call)[1] for call in calls.values()]
    counts = [max(1, round(target / max(s, 1e-9))) for s in seconds]
    samples = dict(zip(calls, interleaved(list(calls.values()), counts, rounds)))
    numpy = samples["numpy"]
    speedups = {label: statistics.median(b / t for t, b in zip(times, numpy))
                for label, times in samples.items() if label != "numpy"}
    return max(host, key=np.size).shape, statistics.median(numpy), speedups


# Targets of single patterns the workloads above are made of.

def fill_diagonal(xp):
    """1000 element writes into a 1000x1000 array, then one read."""
    X = xp.ones((1000, 1000))
    for i in range(1000):
        X[i, i] = 0.0
    return np.asarray(X)


def tiny_read(xp, x):
    """A tiny expression read back as a Python float."""
    return float(xp.sum(x * 2.0 + 1.0))


def resident_mb():
    """The process's resident memory in MB (Linux), or None."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, AttributeError):
        return None


def plan_memory(shapes):
    """(the process's growth in MB or None, plans built, seconds a length)
    while arrayx evaluates one small expression at `shapes`
    distinct lengths: the plan cache's footprint and the cost of a new shape."""
    arrayx.eval(arrayx.sum(arrayx.sin(arrayx.ones(1)) * 2.0))
    before = resident_mb()
    built = arrayx.debug.counters["plans_built"]
    t0 = time.perf_counter()
    for n in range(2, shapes + 2):
        x = arrayx.asarray(np.ones(n))
        float(arrayx.sum(arrayx.sin(x) * 2.0 + x))
    seconds = (time.perf_counter() - t0) / shapes
    after = resident_mb()
    return None if before is None else after - before, arrayx.debug.counters["plans_built"] - built, seconds


def scipy_new_lengths(lengths):
    """(plans built, plans rebound, seconds a length for arrayx, for NumPy)
    while SciPy's `logsumexp` and `zscore` run over 8 rows of a new length
    each call, the two libraries interleaved: the cost of a new shape for
    graphs that flatten, slice and broadcast."""
    rng = np.random.default_rng(7)
    counters = arrayx.debug.counters
    built, rebound = counters["plans_built"], counters["plans_rebound"]
    seconds = {np: 0.0, arrayx: 0.0}
    for n in range(100, 100 + lengths):
        host = rng.standard_normal((8, n))
        for xp in (np, arrayx):
            x = xp.asarray(host)
            t0 = time.perf_counter()
            to_host(xp, scipy.special.logsumexp(x, axis=-1))
            to_host(xp, scipy.stats.zscore(x, axis=-1))
            seconds[xp] += time.perf_counter() - t0
    return (counters["plans_built"] - built, counters["plans_rebound"] - rebound,
            seconds[arrayx] / lengths, seconds[np] / lengths)


def targets(rounds):
    """Issue 23's single-pattern targets, NumPy and arrayx interleaved."""
    print("\nTargets (NumPy and arrayx interleaved; median of rounds)")
    for name, fn, args in (("1000 x X[i, i] = 0.0 on 1000x1000, one read", fill_diagonal, ()),
                           ("sum(x * 2.0 + 1.0) of 10 elements, float()", tiny_read, (np.arange(10.0),))):
        calls = [partial(fn, xp, *[xp.asarray(a) for a in args]) for xp in (np, arrayx)]
        counts = [max(1, round(0.05 / max(timed(c)[1], 1e-9))) for c in calls]
        numpy, ours = (statistics.median(t) for t in interleaved(calls, counts, rounds))
        print(f"  {name:<48}numpy {fmt_time(numpy):>9}  arrayx {fmt_time(ours):>9}  arrayx/numpy {ours / numpy:.1f}x")
    for batch in MLP["sizes"].values():
        share = gemm_share(batch[0], 3 * rounds)
        print(f"  {f'MLP step at batch {batch[0]}: GEMMs / NumPy step':<48}{share:>9.2f}  "
              f"(1 BLAS thread, CPU time: numpy/arrayx <= {1 / share:.2f})")
    print("  Medium rows: BLAS and LAPACK calls / NumPy's call (1 BLAS thread, CPU time)")
    for name, share in medium_library_shares(3 * rounds).items():
        print(f"    {name:<46}{share:>9.2f}  (numpy/arrayx <= {1 / share:.2f})")
    growth, built, seconds = plan_memory(10_000)
    t0 = time.perf_counter()
    for n in range(2, 10_002):
        x = np.ones(n)
        float(np.sum(np.sin(x) * 2.0 + x))
    numpy = (time.perf_counter() - t0) / 10_000
    shown = "-" if growth is None else f"{growth:.0f} MB"
    print(f"  {'10^4 lengths of sum(sin(x) * 2.0 + x): growth':<48}{shown:>15}, {built} plans built, "
          f"{fmt_time(seconds)} a length (numpy {fmt_time(numpy)})")
    built, rebound, ours, numpy = scipy_new_lengths(300)
    print(f"  {'SciPy logsumexp + zscore, 8 x n, 300 new n':<48}numpy {fmt_time(numpy):>9}  arrayx {fmt_time(ours):>9}  "
          f"({built} plans built, {rebound} rebound)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--sizes", default=",".join(CLASSES), help="size classes, e.g. small,medium")
    args = parser.parse_args()
    classes = args.sizes.split(",")
    if not set(classes) <= set(CLASSES):
        parser.error(f"--sizes takes a comma-separated subset of {','.join(CLASSES)}")
    # Calls are batched so one sample lasts about `target` seconds; large inputs get fewer rounds.
    rounds = dict(small=3, medium=3, large=1) if args.quick else dict(small=7, medium=7, large=5)
    target = 0.01 if args.quick else 0.05
    start = time.perf_counter()
    print(f"numpy {np.__version__}, array-api-strict {array_api_strict.__version__}, scikit-learn "
          f"{sklearn.__version__}, scipy {scipy.__version__}, arrayx {arrayx.__version__}, {os.cpu_count()} CPUs")
    print("numpy = NumPy's median time; arrayx, strict = numpy/arrayx and numpy/array-api-strict "
          "(higher is faster)\n")
    print(f"{'workload':<44}{'class':<8}{'largest input':>20}{'numpy':>10}{'arrayx':>8}{'strict':>8}")
    ratios = {c: {"arrayx": [], "strict": []} for c in classes}
    for size_class in classes:
        for workload in WORKLOADS:
            if size_class not in workload.sizes:
                continue
            shape, numpy, speedups = measure(workload, size_class, rounds[size_class], target)
            if workload.strict:   # the geometric means compare the rows all three ran
                for label, ratio in speedups.items():
                    ratios[size_class][label].append(ratio)
            size = "x".join(map(str, shape))
            strict = f"{speedups['strict']:>8.2f}" if "strict" in speedups else f"{'-':>8}"
            print(f"{workload.name:<44}{size_class:<8}{size:>20}{fmt_time(numpy):>10}{speedups['arrayx']:>8.2f}"
                  f"{strict}", flush=True)
    print(f"\nGeometric mean of the speedups over NumPy (rows all three ran)\n{'class':<8}{'rows':>6}"
          f"{'arrayx':>8}{'strict':>8}")
    for size_class, by_label in ratios.items():
        means = [statistics.geometric_mean(by_label[label]) for label in ("arrayx", "strict")]
        print(f"{size_class:<8}{len(by_label['arrayx']):>6}{means[0]:>8.2f}{means[1]:>8.2f}")
    targets(rounds["small"])
    print(f"\nTotal time: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
