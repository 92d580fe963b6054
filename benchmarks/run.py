"""arrayx against NumPy eager and its peers, measured interleaved in one run.

    python benchmarks/run.py                     # every workload, a few minutes on 2 cores
    python benchmarks/run.py --quick             # fewer rounds, no 1e8 arrays
    python benchmarks/run.py --sizes 1e3 1e6     # chain sizes to run
    python benchmarks/run.py --only peers        # some sections (see --help)

Each table gives NumPy eager's median time and the speedups numpy/arrayx and
numpy/numexpr (higher is faster; each is the median over rounds of the ratio
measured in the same round, so drift cancels). arrayx builds a fresh graph
and evaluates it in every call, with the plan cache warm. Peak memory is the
most a single call allocated above its inputs (tracemalloc sees NumPy's
buffers), in bytes and in result sizes. Every case is checked against NumPy
once before it is timed. Nothing here asserts a timing.

arrayx runs with its default CPU kernels (ARRAYX_CPU_KERNELS=auto: each
fused group's native kernel, compiled before timing starts); run with
ARRAYX_CPU_KERNELS=numpy for the NumPy path's figures.

The peers table runs the chains, row softmax and logsumexp and a fused dot
in numexpr, PyTorch (eager and `torch.compile`), JAX (op by op, and
`jax.jit`) and tinygrad's TinyJit where they are installed (`pip install
.[bench]`; TinyJit needs clang), beside arrayx evaluated and compiled. The
native-kernels section gives first-compile latency, disk-cache hits in a
second process, and the axpy chain's bandwidth against the machine's STREAM
triad.
"""

import argparse
import gc
import os
import platform
import statistics
import sys
import time
import tracemalloc

import numpy as np

# Benchmark the checkout this script lives in, not an installed copy.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import arrayx as xp  # noqa: E402

try:
    import numexpr as ne
except ImportError:
    ne = None


def logistic_into(out, temp, x):
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(out, 1, out=out)
    return np.divide(1, out, out=out)


def axpy_into(out, temp, x, y):
    np.multiply(x, 2.5, out=temp)
    np.multiply(y, 1.5, out=out)
    np.add(temp, out, out=out)
    return np.add(out, 0.5, out=out)


def tanh_into(out, temp, x, y):
    np.multiply(x, y, out=temp)
    np.divide(x, y, out=out)
    np.add(temp, out, out=out)
    return np.tanh(out, out=out)


def horner_into(out, temp, x):
    np.multiply(x, 0.3, out=out)
    for c in (0.5, -0.7, 1.1, -1.3):
        np.add(out, c, out=out)
        np.multiply(out, x, out=out)
    return np.add(out, 1.7, out=out)


# (name, operands, function of (namespace, *operands), numexpr expression,
#  the same NumPy calls writing into `out` and one temporary: the kernels a
#  compiled chain runs, for the ceilings)
CHAINS = [
    ("logistic 1/(1+exp(-x))", "x", lambda m, x: 1 / (1 + m.exp(-x)), "1/(1+exp(-x))", logistic_into),
    ("axpy 2.5*x+1.5*y+0.5", "xy", lambda m, x, y: 2.5 * x + 1.5 * y + 0.5, "2.5*x+1.5*y+0.5", axpy_into),
    ("tanh(x*y+x/y)", "xy", lambda m, x, y: m.tanh(x * y + x / y), "tanh(x*y+x/y)", tanh_into),
    ("poly Horner degree 5", "x", lambda m, x: ((((0.3 * x + 0.5) * x - 0.7) * x + 1.1) * x - 1.3) * x + 1.7,
     "((((0.3*x+0.5)*x-0.7)*x+1.1)*x-1.3)*x+1.7", horner_into),
]


def row_softmax(m, v):
    """Softmax along each row of 2-D `v`, in namespace `m`."""
    e = m.exp(v - m.max(v, axis=1, keepdims=True))
    return e / m.sum(e, axis=1, keepdims=True)


def row_logsumexp(m, v):
    """log(sum(exp(v))) along each row of 2-D `v` (kept as a column), in namespace `m`."""
    top = m.max(v, axis=1, keepdims=True)
    return top + m.log(m.sum(m.exp(v - top), axis=1, keepdims=True))


def chain_operands(rng, size):
    """The chains' operands x and y: {name: NumPy array}, {name: arrayx array} of the same memory."""
    host = {k: rng.uniform(0.5, 2.0, size).astype(np.float32) for k in "xy"}
    return host, {k: xp.asarray(v, copy=False) for k, v in host.items()}


def compiled_chain(fn):
    """A chain of CHAINS compiled by `xp.jit`."""
    return xp.jit(lambda *v: fn(xp, *v))


def time_call(fn, count):
    t0 = time.perf_counter_ns()
    for _ in range(count):
        fn()
    return (time.perf_counter_ns() - t0) / count


def interleaved(fns, rounds, target_ns):
    """Per-round ns per call of each function, interleaved within each round;
    calls are batched so one sample lasts about `target_ns`."""
    counts = [max(1, round(target_ns / time_call(fn, 1))) for fn in fns]
    samples = [[] for _ in fns]
    for _ in range(rounds):
        for fn, count, out in zip(fns, counts, samples):
            out.append(time_call(fn, count))
    return samples


def speedup(times, numpy_times):
    return statistics.median(b / t for t, b in zip(times, numpy_times))


def peak_bytes(fn):
    """The most one call of `fn` allocates at a time (its result included;
    arrayx's pool of dead results is emptied first, so it is counted)."""
    gc.collect()
    xp.debug.free_held_memory()
    tracemalloc.start()
    try:
        result = fn()
        del result
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def fmt_time(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def fmt_bytes(n):
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


HEADER = f"{'workload':<34}{'size':>13}{'numpy':>10}{'arrayx':>8}{'numexpr':>9}{'ax/ne':>7}{'peak np':>10}{'peak ax':>10}"


def row(name, size, fns, check, rounds, target_ns, work_bytes=None):
    """Time (arrayx, numpy[, numexpr]) interleaved and print one row."""
    expected = np.asarray(fns[1]())
    got = np.asarray(fns[0]())
    assert got.dtype == expected.dtype, (name, got.dtype, expected.dtype)
    for f in fns:
        check(np.asarray(f()), expected)   # numexpr may compute in float64: values only
    del expected, got
    xp.debug.wait_for_kernels()   # time arrayx's native kernels, not the NumPy path they replace
    fns[0]()
    built = xp.debug.counters["plans_built"]
    samples = interleaved(fns, rounds, target_ns)
    if xp.debug.counters["plans_built"] != built:
        raise RuntimeError(f"{name}: the plan cache missed while timing")
    t_np = samples[1]
    ax = speedup(samples[0], t_np)
    ne_col = f"{speedup(samples[2], t_np):>9.2f}{ax / speedup(samples[2], t_np):>7.2f}" if len(fns) > 2 else f"{'-':>9}{'-':>7}"
    peaks = "" if size < 10**6 else f"{fmt_bytes(peak_bytes(fns[1])):>10}{fmt_bytes(peak_bytes(fns[0])):>10}"
    line = f"{name:<34}{size:>13,}{fmt_time(statistics.median(t_np)):>10}{ax:>8.2f}{ne_col}{peaks}"
    if work_bytes:
        line += f"   arrayx {work_bytes / statistics.median(samples[0]):.1f} GB/s, numpy {work_bytes / statistics.median(t_np):.1f} GB/s"
    print(line, flush=True)


def close(rtol):
    def check(got, want):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
    return check


def chains(sizes, rounds, target_ns):
    print("Elementwise chains, float32")
    print(HEADER)
    rng = np.random.default_rng(0)
    for size in sizes:
        host, lazy = chain_operands(rng, size)
        n_rounds = rounds if size < 10**8 else max(3, rounds // 3)
        for name, operands, fn, expr, _ in CHAINS:
            nargs = [host[k] for k in operands]
            xargs = [lazy[k] for k in operands]
            fns = [lambda: xp.eval(fn(xp, *xargs)), lambda: fn(np, *nargs)]
            if ne is not None:
                local = {k: host[k] for k in operands}
                fns.append(lambda: ne.evaluate(expr, local_dict=local))
            traffic = (len(operands) + 1) * 4 * size if size >= 10**8 else None
            row(name, size, fns, close(1e-5), n_rounds, target_ns, traffic)
        del host, lazy


def rows_and_dots(rounds, target_ns):
    print("\nReductions and contractions, float32")
    print(HEADER)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4096, 4096)).astype(np.float32)
    x = xp.asarray(a)

    row("row softmax 4096x4096", a.size, [lambda: xp.eval(row_softmax(xp, x)), lambda: row_softmax(np, a)],
        close(1e-6), rounds, target_ns)
    row("row logsumexp 4096x4096", a.size, [lambda: xp.eval(row_logsumexp(xp, x)), lambda: row_logsumexp(np, a)],
        close(1e-5), rounds, target_ns)
    # Layouts other than C order: the rows of a transposed matrix, strided inputs of a math function.
    row("row softmax of x.T 4096x4096", a.size, [lambda: xp.eval(row_softmax(xp, x.T)), lambda: row_softmax(np, a.T)],
        close(1e-6), rounds, target_ns)
    row("sin(x[:, ::2]) + x[:, 1::2]", a.size // 2,
        [lambda: xp.eval(xp.sin(x[:, ::2]) + x[:, 1::2]), lambda: np.sin(a[:, ::2]) + a[:, 1::2]],
        close(1e-6), rounds, target_ns)
    u = rng.uniform(0.5, 1.5, 10**7).astype(np.float32)
    v = rng.uniform(0.5, 1.5, 10**7).astype(np.float32)
    xu, xv = xp.asarray(u), xp.asarray(v)
    fns = [lambda: xp.eval(xp.sum(xu * xv)), lambda: np.sum(u * v)]
    if ne is not None:
        fns.append(lambda: ne.evaluate("sum(u*v)", local_dict={"u": u, "v": v}))
    # numexpr sums float32 one element after another: 1e7 terms drift by ~1e-3
    row("sum(x*y)", u.size, fns, close(1e-2), rounds, target_ns)
    g = rng.standard_normal((2048, 2048)).astype(np.float32)
    h = rng.standard_normal((2048, 2048)).astype(np.float32)
    xg, xh = xp.asarray(g), xp.asarray(h)
    row("GEMM 2048^3", g.size, [lambda: xp.eval(xg @ xh), lambda: g @ h], close(1e-3), rounds, target_ns)


def build_loop(rounds):
    """A 20000-op `y = y + x` loop on 100 elements, automatic realizations
    included, against the same loop in NumPy."""
    x, xn = xp.asarray(np.ones(100)), np.ones(100)
    ops = 20000

    def lazy():
        y = x
        for _ in range(ops):
            y = y + x
        return xp.eval(y)

    def eager():
        y = xn
        for _ in range(ops):
            y = y + xn
        return y

    assert float(lazy()[0]) == eager()[0]
    samples = interleaved([lazy, eager], rounds, 0)
    ax, npy = statistics.median(samples[0]) / ops / 1e3, statistics.median(samples[1]) / ops / 1e3
    print(f"\nGraph build in a loop: y = y + x, {ops} ops on 100 float64 (automatic realizations included)")
    print(f"arrayx {ax:.2f} us/op, numpy {npy:.2f} us/op")


def chain_memory():
    """Peak memory above the inputs of a 10-op chain over 1e7 float64."""
    a = np.random.default_rng(2).uniform(0.5, 2.0, 10**7)
    x = xp.asarray(a)

    def chain(m, v):
        return m.sin(m.sin(m.sin(v * v + v) * v + v) * v + v) * v

    size = a.nbytes
    ax = peak_bytes(lambda: xp.eval(chain(xp, x)))
    npy = peak_bytes(lambda: chain(np, a))
    print("\nPeak memory of a 10-op chain over 1e7 float64, above its input (one array is "
          f"{fmt_bytes(size)}):")
    print(f"arrayx {fmt_bytes(ax)} ({ax / size:.2f} arrays), numpy {fmt_bytes(npy)} ({npy / size:.2f} arrays)")


def computations(rounds, target_ns):
    """Compiled computations: jit of a 10-op chain, the overhead of a call, and
    a 784-256-10 MLP training step (forward, gradients, SGD assigns) against
    the same step written by hand in NumPy."""
    from arrayx import transformers as ngt
    from arrayx.autodiff import gradients

    print("\nCompiled computations (arrayx.jit, transformers)")
    print(HEADER)

    def chain(m, v):
        for _ in range(5):
            v = m.sin(v) * v + v
        return v

    a = np.linspace(0, 1, 1000)
    x = xp.asarray(a)
    fast = xp.jit(lambda v: chain(xp, v))
    row("jit 10 ops 5x(sin(v)*v+v), f64", a.size, [lambda: fast(x), lambda: chain(np, a)], close(1e-12),
        rounds, target_ns)
    poly = next(c[2] for c in CHAINS if c[0].startswith("poly"))   # 10 arithmetic ops
    fast_poly = xp.jit(lambda v: poly(xp, v))
    row("jit 10 ops poly Horner, f64", a.size, [lambda: fast_poly(x), lambda: poly(np, a)], close(1e-12),
        rounds, target_ns)
    one, host_one = xp.asarray(np.ones(1)), np.ones(1)
    plus = xp.jit(lambda v: v + 1.0)
    row("jit call overhead, v + 1", 1, [lambda: plus(one), lambda: host_one + 1.0], close(0), rounds, target_ns)

    rng = np.random.default_rng(3)
    batch, n_in, n_hidden, n_out, lr = 64, 784, 256, 10, np.float32(0.01)
    xs = rng.standard_normal((batch, n_in)).astype(np.float32)
    labels = np.eye(n_out, dtype=np.float32)[rng.integers(0, n_out, batch)]
    w1_0 = (rng.standard_normal((n_in, n_hidden)) * 0.05).astype(np.float32)
    w2_0 = (rng.standard_normal((n_hidden, n_out)) * 0.05).astype(np.float32)

    px, py = ngt.placeholder((batch, n_in), xp.float32), ngt.placeholder((batch, n_out), xp.float32)
    w1, w2 = ngt.variable(w1_0, name="w1"), ngt.variable(w2_0, name="w2")
    b1 = ngt.variable(np.zeros(n_hidden, np.float32), name="b1")
    b2 = ngt.variable(np.zeros(n_out, np.float32), name="b2")
    logits = xp.maximum(px @ w1 + b1, 0.0) @ w2 + b2
    top = xp.max(logits, axis=1, keepdims=True)
    lse = top + xp.log(xp.sum(xp.exp(logits - top), axis=1, keepdims=True))
    loss = xp.mean(xp.sum(py * (lse - logits), axis=1))
    grads = gradients(loss, [w1, b1, w2, b2])
    t = ngt.make_transformer()
    step = t.computation([loss] + [ngt.assign(v, v - lr * g) for v, g in zip((w1, b1, w2, b2), grads)], px, py)

    state = {"w1": w1_0.copy(), "b1": np.zeros(n_hidden, np.float32), "w2": w2_0.copy(),
             "b2": np.zeros(n_out, np.float32)}

    def numpy_step():
        h_pre = xs @ state["w1"] + state["b1"]
        h = np.maximum(h_pre, 0)
        z = h @ state["w2"] + state["b2"]
        e = np.exp(z - z.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        value = np.mean(np.sum(labels * (np.log(e.sum(axis=1, keepdims=True)) + z.max(axis=1, keepdims=True) - z),
                               axis=1))
        dz = (p - labels) / np.float32(batch)
        dh = (dz @ state["w2"].T) * (h_pre > 0)
        state["w2"] -= lr * (h.T @ dz)
        state["b2"] -= lr * dz.sum(axis=0)
        state["w1"] -= lr * (xs.T @ dh)
        state["b1"] -= lr * dh.sum(axis=0)
        return value

    # One step each from the same weights: the updates agree to float32 rounding.
    first = float(step(xs, labels)[0])
    np.testing.assert_allclose(first, numpy_step(), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(t.computation(w1 * 1.0)()), state["w1"], rtol=1e-4, atol=1e-6)
    row("MLP step 784-256-10, batch 64", batch, [lambda: step(xs, labels)[0], numpy_step],
        lambda got, want: None, rounds, target_ns)


class _Recorded:
    """The least a lazy library written in Python does per operation: make
    one object that holds the operation and its operands."""

    __slots__ = ("op", "args")

    def __init__(self, op, *args):
        self.op, self.args = op, args

    def __add__(self, other): return _Recorded("add", self, other)
    def __radd__(self, other): return _Recorded("add", other, self)
    def __sub__(self, other): return _Recorded("subtract", self, other)
    def __mul__(self, other): return _Recorded("multiply", self, other)
    def __rmul__(self, other): return _Recorded("multiply", other, self)
    def __truediv__(self, other): return _Recorded("divide", self, other)
    def __rtruediv__(self, other): return _Recorded("divide", other, self)
    def __neg__(self): return _Recorded("negative", self)


class _recorder:   # the namespace CHAINS' functions call
    exp = staticmethod(lambda x: _Recorded("exp", x))
    tanh = staticmethod(lambda x: _Recorded("tanh", x))


def ceilings(rounds, target_ns):
    """What bounds a speedup at 1e3 points, where recording a graph costs
    more than the kernels, measured on this machine in this run
    (docs/benchmarks.md gives the figures of the machine arrayx is developed
    on). Each chain's kernels are its NumPy calls writing into existing
    arrays (CHAINS' `into`).

    - Eager chains at 1e3: arrayx records the graph and runs the compiled
      chain (a `jit` call: no recording, no collect pass); ceiling =
      numpy / (record + jit call). Any lazy library written in Python makes at
      least one object per operation and runs at least the kernels: bound =
      numpy / (bare record + kernels).
    - A compiled 10-op chain at 1e3: NumPy eager differs from the kernels only
      by allocating results; ceiling = numpy / kernels.

    The last column is arrayx's speedup (the chain rows' call) in the same
    rounds as its ceiling. At 1e6 and more the bound is memory bandwidth:
    native_kernels() measures the machine's STREAM triad.
    """
    print("\nCeilings on this machine: the most speedup over NumPy that recording a graph (eager at 1e3) "
          "and NumPy-call kernels (jit) allow")
    print(f"{'workload':<34}{'size':>13}{'numpy':>10}{'record':>10}{'kernels':>10}{'ceiling':>9}"
          f"{'bare record':>13}{'bound':>7}{'arrayx':>8}")
    rng = np.random.default_rng(0)
    size = 10**3
    host, lazy = chain_operands(rng, size)
    out, temp = np.empty(size, np.float32), np.empty(size, np.float32)
    for name, operands, fn, _, into in CHAINS:
        nargs = [host[k] for k in operands]
        xargs = [lazy[k] for k in operands]

        def evaluate():   # the chain row's arrayx call, timed beside the ceiling
            return xp.eval(fn(xp, *xargs))
        compiled = compiled_chain(fn)
        bare = [_Recorded("input") for _ in operands]
        close(1e-5)(into(out, temp, *nargs), fn(np, *nargs))
        compiled(*xargs)
        evaluate()
        xp.debug.wait_for_kernels()
        record, kernels, numpy, bare_record, bare_kernels, arrayx = (statistics.median(t) for t in interleaved(
            [lambda: fn(xp, *xargs), lambda: compiled(*xargs), lambda: fn(np, *nargs),
             lambda: fn(_recorder, *bare), lambda: into(out, temp, *nargs), evaluate], rounds, target_ns))
        print(f"{name:<34}{size:>13,}{fmt_time(numpy):>10}{fmt_time(record):>10}{fmt_time(kernels):>10}"
              f"{numpy / (record + kernels):>9.2f}{fmt_time(bare_record):>13}{numpy / (bare_record + bare_kernels):>7.2f}"
              f"{numpy / arrayx:>8.2f}", flush=True)

    a = np.linspace(0, 1, 1000)
    poly, into = next((c[2], c[4]) for c in CHAINS if c[0].startswith("poly"))
    np.testing.assert_allclose(into(out.astype(np.float64), temp.astype(np.float64), a), poly(np, a), rtol=1e-15)
    out64, temp64 = np.empty_like(a), np.empty_like(a)
    kernels, numpy = (statistics.median(t) for t in interleaved([lambda: into(out64, temp64, a), lambda: poly(np, a)],
                                                                 rounds, target_ns))
    print(f"{'jit 10 ops poly Horner, f64':<34}{a.size:>13,}{fmt_time(numpy):>10}{'-':>10}{fmt_time(kernels):>10}"
          f"{numpy / kernels:>9.2f}")


class _TorchNamespace:
    """The functions the workloads call, in PyTorch's spelling."""

    def __init__(self, torch):
        self.exp, self.tanh, self.log = torch.exp, torch.tanh, torch.log
        self.max = lambda v, axis, keepdims: torch.amax(v, dim=axis, keepdim=keepdims)
        self.sum = lambda v, axis=None, keepdims=False: (torch.sum(v) if axis is None
                                                        else torch.sum(v, dim=axis, keepdim=keepdims))


class _TinygradNamespace:
    """The functions the workloads call, as tinygrad's Tensor methods."""

    exp = staticmethod(lambda v: v.exp())
    tanh = staticmethod(lambda v: v.tanh())
    log = staticmethod(lambda v: v.log())
    max = staticmethod(lambda v, axis, keepdims: v.max(axis=axis, keepdim=keepdims))
    sum = staticmethod(lambda v, axis=None, keepdims=False: v.sum(axis=axis, keepdim=keepdims))


def peer_workloads(sizes):
    """(name, size, function of (namespace, *operands), NumPy operands) for
    the peers table: the chains at each size, then the row reductions and
    the dot as a fused sum."""
    rng = np.random.default_rng(0)
    for size in sizes:
        host = {k: rng.uniform(0.5, 2.0, size).astype(np.float32) for k in "xy"}
        for name, operands, fn, _, _ in CHAINS:
            yield name, size, fn, [host[k] for k in operands]
    rows = rng.standard_normal((4096, 4096)).astype(np.float32)
    yield "row softmax 4096x4096", rows.size, row_softmax, [rows]
    yield "row logsumexp 4096x4096", rows.size, row_logsumexp, [rows]
    u, v = (rng.uniform(0.5, 1.5, 10**7).astype(np.float32) for _ in range(2))
    yield "sum(x*y)", u.size, lambda m, a, b: m.sum(a * b), [u, v]


def peers(sizes, rounds, target_ns):
    """The workloads in the libraries a user would weigh arrayx against,
    timed interleaved with NumPy: arrayx eager (a fresh graph per call, its
    groups on their native kernels) and compiled (`xp.jit`), numexpr,
    PyTorch eager (C++ dispatch, one kernel per operation) and
    `torch.compile` (Inductor's C++ loops), JAX op by op and under
    `jax.jit` (XLA compiles the chain into one loop), and tinygrad's TinyJit
    (its kernels as C, built by clang). A peer that is not installed shows
    '-'; every compiled peer is called once before timing."""
    try:
        import torch
        # Each workload's function is a new closure of one code object, which
        # Dynamo compiles anew: past its default 8, it would run them eagerly.
        torch._dynamo.config.recompile_limit = 64
    except ImportError:
        torch = None
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        jax = None
    try:
        from tinygrad import Device, Tensor, TinyJit
        Device[Device.DEFAULT]   # raises where tinygrad finds no usable device (no clang)
    except Exception:   # tinygrad missing, or without a compiler for its CPU device
        Tensor = None
    versions = [f"torch {torch.__version__}, {torch.get_num_threads()} threads" if torch else "torch not installed",
                f"jax {jax.__version__}" if jax else "jax not installed",
                f"tinygrad on {Device.DEFAULT}" if Tensor is not None else "tinygrad not usable"]
    print(f"\nPeers: float32 workloads, speedup over NumPy ({'; '.join(versions)})")
    columns = ["arrayx", "ax.jit", "numexpr", "torch", "t.compile", "jax", "jax.jit", "TinyJit"]
    print(f"{'workload':<34}{'size':>13}{'numpy':>10}" + "".join(f"{c:>10}" for c in columns))
    for name, size, fn, nargs in peer_workloads(sizes):
        xargs = [xp.asarray(a) for a in nargs]
        compiled = compiled_chain(fn)
        calls = {"arrayx": lambda: xp.eval(fn(xp, *xargs)), "ax.jit": lambda: compiled(*xargs)}
        expr = next((c[3] for c in CHAINS if c[0] == name), None)
        if ne is not None and expr is not None:
            local = dict(zip("xy", nargs))
            calls["numexpr"] = lambda: ne.evaluate(expr, local_dict=local)
        if torch is not None:
            torch_ns = _TorchNamespace(torch)
            targs = [torch.from_numpy(a) for a in nargs]
            inductor = torch.compile(lambda *v, fn=fn: fn(torch_ns, *v))
            calls["torch"] = lambda: fn(torch_ns, *targs)
            calls["t.compile"] = lambda: inductor(*targs)
        if jax is not None:
            jargs = [jnp.asarray(a) for a in nargs]
            jitted = jax.jit(lambda *v, fn=fn: fn(jnp, *v))
            calls["jax"] = lambda: fn(jnp, *jargs).block_until_ready()
            calls["jax.jit"] = lambda: jitted(*jargs).block_until_ready()
        if Tensor is not None:
            gargs = [Tensor(a).realize() for a in nargs]
            tiny = TinyJit(lambda *v, fn=fn: fn(_TinygradNamespace, *v).realize())

            def tinyjit(tiny=tiny, gargs=gargs):
                out = tiny(*gargs)
                Device[Device.DEFAULT].synchronize()
                return out
            calls["TinyJit"] = tinyjit

        def numpy():
            return fn(np, *nargs)
        expected = numpy()
        for label, call in calls.items():   # also compiles the jits before timing (TinyJit captures at its 3rd call)
            for _ in range(3 if label == "TinyJit" else 1):
                got = call()
            got = got.numpy() if label == "TinyJit" else np.asarray(got)
            close(1e-4 if "sum" in name else 1e-5)(got, expected)
        xp.debug.wait_for_kernels()
        del expected
        samples = interleaved([numpy] + list(calls.values()), rounds, target_ns)
        ratios = dict(zip(calls, (speedup(t, samples[0]) for t in samples[1:])))
        print(f"{name:<34}{size:>13,}{fmt_time(statistics.median(samples[0])):>10}"
              + "".join(f"{ratios[c]:>10.2f}" if c in ratios else f"{'-':>10}" for c in columns), flush=True)


NATIVE_PROBE = """
import json, sys, time
import numpy as np
sys.path.insert(0, {root!r})
sys.path.insert(0, {here!r})
import arrayx as xp
from run import CHAINS, row_logsumexp, row_softmax

rng = np.random.default_rng(0)
x, y = (xp.asarray(rng.uniform(0.5, 2.0, 10**5).astype(np.float32)) for _ in range(2))
rows = xp.asarray(rng.standard_normal((256, 4096)).astype(np.float32))
workloads = [(name, lambda fn=fn, ops=ops: fn(xp, *[{{"x": x, "y": y}}[k] for k in ops])) for name, ops, fn, _, _ in CHAINS]
workloads += [("row softmax", lambda: row_softmax(xp, rows)), ("row logsumexp", lambda: row_logsumexp(xp, rows)),
              ("sum(x*y)", lambda: xp.sum(x * y))]
out = []
for name, build in workloads:
    before = xp.debug.kernel_counts()
    start = time.perf_counter()
    xp.eval(build())
    first = time.perf_counter() - start
    counts = xp.debug.kernel_counts()
    out.append((name, first, counts["compiled"] - before["compiled"], counts["disk_hits"] - before["disk_hits"],
                counts["compile_seconds"] - before["compile_seconds"]))
print(json.dumps(out))
"""

TRIAD_SOURCE = r"""
#include <omp.h>
void triad(float* a, const float* b, const float* c, float s, long n, int threads) {
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
}
"""


def stream_triad(n, threads, directory):
    """A call running the STREAM triad a = b + s * c over `n` float32 on
    `threads` threads (compiled with OpenMP into `directory`), or None
    without a C compiler with OpenMP."""
    import ctypes
    import shutil
    import subprocess
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        return None
    source, library = os.path.join(directory, "triad.c"), os.path.join(directory, "triad.so")
    with open(source, "w") as f:
        f.write(TRIAD_SOURCE)
    if subprocess.run([cc, "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-o", library, source],
                      capture_output=True).returncode:
        return None
    triad = ctypes.CDLL(library).triad
    triad.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_float, ctypes.c_long, ctypes.c_int]
    a, b, c = (np.ones(n, np.float32) for _ in range(3))
    return lambda: triad(a.ctypes.data, b.ctypes.data, c.ctypes.data, 2.5, n, threads)


def native_kernels(rounds, target_ns):
    """The native kernels' costs and bounds: the first compile of each
    workload's kernels in an empty disk cache, the same workloads in a second
    process (which compiles nothing), and the axpy chain's bandwidth beside
    the machine's STREAM triad at 1e7 float32 (the same traffic: two arrays
    read, one written)."""
    import json
    import subprocess
    import tempfile
    print("\nNative kernels: first compile (a new process, an empty disk cache), then a second process")
    here = os.path.dirname(os.path.abspath(__file__))
    probe = NATIVE_PROBE.format(root=os.path.dirname(here), here=here)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, ARRAYX_CACHE_DIR=cache, ARRAYX_CPU_KERNELS="native")
        runs = [json.loads(subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                                          check=True).stdout) for _ in range(2)]
    print(f"{'workload':<24}{'kernels':>9}{'compile':>10}{'first call':>12}{'2nd process: compiled':>23}"
          f"{'disk hits':>11}{'first call':>12}")
    for (name, first, compiled, _, seconds), (_, again, compiled_2, hits_2, _) in zip(*runs):
        per_kernel = f"{seconds / compiled * 1e3:.0f} ms" if compiled else "-"
        print(f"{name:<24}{compiled:>9}{per_kernel:>10}{fmt_time(first * 1e9):>12}{compiled_2:>23}{hits_2:>11}"
              f"{fmt_time(again * 1e9):>12}")
    size = 10**7
    rng = np.random.default_rng(0)
    host, lazy = chain_operands(rng, size)
    fn = next(c[2] for c in CHAINS if c[0].startswith("axpy"))
    xp.eval(fn(xp, lazy["x"], lazy["y"]))
    xp.debug.wait_for_kernels()
    from arrayx._cpu.workers import THREADS
    traffic = 3 * 4 * size
    with tempfile.TemporaryDirectory() as directory:
        triad = stream_triad(size, THREADS, directory)
        calls = [lambda: xp.eval(fn(xp, lazy["x"], lazy["y"]))] + ([triad] if triad else [])
        # Interleaved, the best call of each: the bandwidth each reaches on the machine as it is in this run.
        best = [min(times) for times in zip(*[[time_call(call, 1) for call in calls]
                                             for _ in range(max(5, rounds * 3))])]
    line = f"axpy 2.5*x+1.5*y+0.5 at 1e7: {traffic / best[0]:.1f} GB/s"
    if triad is not None:
        line += (f"; STREAM triad on {THREADS} threads: {traffic / best[1]:.1f} GB/s; "
                 f"ratio {best[1] / best[0]:.2f}")
    print(line)


def machine():
    ne_version = f"{ne.__version__} ({ne.get_num_threads()} threads)" if ne else "not installed"
    load = " load average %.2f %.2f %.2f" % os.getloadavg() if hasattr(os, "getloadavg") else ""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"Machine: {platform.platform()}, {model}, {os.cpu_count()} CPUs,{load}")
    print(f"Python {platform.python_version()}, numpy {np.__version__}, numexpr {ne_version}, arrayx {xp.__version__}")
    print("Columns: numpy = NumPy eager median time; arrayx, numexpr = speedup over NumPy (higher is faster); "
          "ax/ne = arrayx over numexpr; peak = most allocated during one call\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, no 1e8 arrays")
    parser.add_argument("--sizes", nargs="+", type=float, metavar="N", help="chain sizes (default 1e3 1e6 1e7 1e8)")
    parser.add_argument("--only", nargs="+", metavar="SECTION", help="sections to run: chains, reductions, "
                        "computations, build, ceilings, peers, native, memory (default: all)")
    args = parser.parse_args()
    sizes = [int(n) for n in args.sizes] if args.sizes else ([10**3, 10**6, 10**7] if args.quick
                                                             else [10**3, 10**6, 10**7, 10**8])
    rounds, target = (3, 20e6) if args.quick else (9, 100e6)
    sections = {
        "chains": lambda: chains(sizes, rounds, target),
        "reductions": lambda: rows_and_dots(rounds, target),
        "computations": lambda: computations(rounds, target),
        "build": lambda: build_loop(3 if args.quick else 7),
        "ceilings": lambda: ceilings(rounds, target),
        "peers": lambda: peers([n for n in sizes if n <= 10**7], rounds, target),
        "native": lambda: native_kernels(rounds, target),
        "memory": chain_memory,
    }
    unknown = set(args.only or ()) - set(sections)
    if unknown:
        parser.error(f"--only: no section {', '.join(sorted(unknown))}; the sections are {', '.join(sections)}")
    start = time.perf_counter()
    machine()
    for name, section in sections.items():
        if args.only is None or name in args.only:
            section()
    print(f"\nTotal time: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
