"""Baseline benchmark: arrayx graph-build overhead and elementwise-chain evaluation.

    python benchmarks/run.py                      # default run, 1-3 minutes on 2 cores
    python benchmarks/run.py --quick              # smoke run, about 15 s
    python benchmarks/run.py --sizes 1e5 1e7      # evaluation sizes to run

Prints the machine, then two tables:

1. Graph build: microseconds per recorded operation (build only, nothing
   evaluated), next to one eager NumPy call on a 16-element array.
2. Evaluation of elementwise chains: NumPy's absolute time and the ratios
   arrayx/NumPy and numexpr/NumPy (lower is faster). Every case is checked
   against NumPy once before it is timed.

This is the baseline for kernel fusion: the CPU executor runs each primitive
as its own NumPy call today. Nothing here asserts a timing.
"""

import argparse
import gc
import os
import platform
import statistics
import sys
import time
import timeit

import numpy as np

# Benchmark the checkout this script lives in, not an installed copy.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import arrayx as xp  # noqa: E402
from arrayx.namespace.build import MAX_DEPTH  # noqa: E402

try:
    import numexpr as ne
except ImportError:
    ne = None

# Graph build ----------------------------------------------------------------

# Statements that record one operation each. x and y are 4x4 float64 arrayx
# arrays, so x[0] is a row and xp.sum(x, axis=0) a real reduction; 1.0 is a
# Python scalar.
BUILD_STATEMENTS = ["x + y", "x * y", "xp.exp(x)", "x + 1.0", "x[0]", "xp.sum(x, axis=0)"]

# The chain is built CHAIN_STEPS iterations (2 ops each) at a time, so its
# depth stays below MAX_DEPTH and arrayx never realizes it automatically:
# the measurement is graph building (and freeing) only.
CHAIN_STEPS = 500
CHAIN_STATEMENT = f"""
y = x
for _ in range({CHAIN_STEPS}):
    y = y * x + x
"""
CHAINS = 50  # chains a round: 50_000 ops
assert 2 * CHAIN_STEPS < MAX_DEPTH


def build_us_per_op(stmt, names, number, ops, rounds):
    """Median over rounds of microseconds per op of `stmt` run `number` times.

    timeit inlines `stmt` in its loop (no call overhead per op); the result of
    each statement is dropped, so freeing the graph is part of the cost. The
    garbage collector stays on, as it is when a program builds graphs.
    """
    timer = timeit.Timer(stmt, setup="gc.enable()", timer=time.perf_counter_ns, globals=names)
    return statistics.median(timer.timeit(number) / (number * ops) / 1e3 for _ in range(rounds))


def build_table(rounds):
    host = np.linspace(0.5, 2.0, 16).reshape(4, 4)
    names = {"gc": gc, "xp": xp, "np": np, "x": xp.asarray(host), "y": xp.asarray(host[::-1].copy())}
    before = dict(xp.debug.counters)

    # Loop counts give rounds of roughly 20-50 ms, long enough to average out timer noise.
    rows = [(stmt, build_us_per_op(stmt, names, 20000, 1, rounds)) for stmt in BUILD_STATEMENTS]
    rows.append((f"chain y = y * x + x ({2 * CHAIN_STEPS} ops, x{CHAINS})",
                 build_us_per_op(CHAIN_STATEMENT, names, CHAINS, 2 * CHAIN_STEPS, rounds)))

    for key in ("realizations", "auto_realizations"):
        if xp.debug.counters[key] != before[key]:
            raise RuntimeError(f"graph-build benchmark evaluated something ({key} changed)")

    names.update(a=host.reshape(-1), b=host[::-1].reshape(-1).copy())
    numpy_us = build_us_per_op("np.add(a, b)", names, 200000, 1, rounds)

    print(f"Graph build: arrayx, 4x4 float64 operands, build only: nothing evaluated (chains stay below "
          f"MAX_DEPTH={MAX_DEPTH}),")
    print(f"each result freed, GC on; median of {rounds} rounds")
    print(f"{'operation':<38}{'us/op':>8}{'x np.add':>10}")
    for label, us in rows:
        print(f"{label:<38}{us:>8.2f}{us / numpy_us:>10.1f}")
    print(f"{'numpy np.add(a, b), 16 float64 (ref.)':<38}{numpy_us:>8.2f}{1.0:>10.1f}")


# Evaluation ------------------------------------------------------------------

# (label, operand names, function of (namespace, *operands), numexpr expression).
# One function serves arrayx and NumPy: both namespaces have exp, tanh, sin.
CASES = [
    ("logistic 1/(1+exp(-x))", "x", lambda m, x: 1 / (1 + m.exp(-x)), "1/(1+exp(-x))"),
    ("a*x + b*y + c", "abcxy", lambda m, a, b, c, x, y: a * x + b * y + c, "a*x+b*y+c"),
    ("tanh(x*y + x/y)", "xy", lambda m, x, y: m.tanh(x * y + x / y), "tanh(x*y+x/y)"),
    ("10 ops: sin(sin(sin(x*y+x)*y+x)*y+x)*y", "xy",
     lambda m, x, y: m.sin(m.sin(m.sin(x * y + x) * y + x) * y + x) * y,
     "sin(sin(sin(x*y+x)*y+x)*y+x)*y"),
]

DEFAULT_SIZES = [10**3, 10**5, 10**6, 10**7]
LARGE = 10**7  # from this size on, one call is slow enough for fewer rounds
# Results are O(1); the tolerance is absolute as well as relative because sin
# near a multiple of pi leaves few significant digits (numexpr and NumPy use
# different sin implementations).
TOLERANCE = {np.float32: 1e-5, np.float64: 1e-12}


def time_call(fn, count):
    """Nanoseconds per call of `fn`, over `count` back-to-back calls."""
    t0 = time.perf_counter_ns()
    for _ in range(count):
        fn()
    return (time.perf_counter_ns() - t0) / count


def interleaved(fns, rounds, target_ns):
    """Per-round times (ns per call) of each function, interleaved within each round.

    Calls are batched so that one sample lasts about `target_ns`: a single
    microsecond-long call is below the timer's noise. Interleaving makes every
    function see the same machine state (turbo, other load) in each round.
    """
    counts = [max(1, round(target_ns / time_call(fn, 1))) for fn in fns]
    samples = [[] for _ in fns]
    for _ in range(rounds):
        for fn, count, out in zip(fns, counts, samples):
            out.append(time_call(fn, count))
    return samples


def median_ratio(times, numpy_times):
    """Median over rounds of time / NumPy's time in the same round (drift cancels)."""
    return statistics.median(t / b for t, b in zip(times, numpy_times))


def format_time(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def eval_table(sizes, rounds, large_rounds, target_ns):
    print("\nEvaluation: arrayx = build a fresh graph + xp.eval each call (plan cache warm); numpy = eager;")
    print("numexpr = numexpr.evaluate. Ratio = median over rounds of (time / numpy time) in the same round; "
          "lower is faster.")
    threads = f", numexpr on {ne.get_num_threads()}" if ne is not None else ""
    print(f"Rounds: {rounds} ({large_rounds} from {LARGE:,} elements); NumPy and arrayx run on one thread{threads}.")
    if ne is None:
        print("numexpr is not installed: its column is skipped (pip install numexpr to add it).")
    print(f"{'case':<42}{'dtype':<9}{'size':>11}{'numpy':>11}{'arrayx/np':>11}{'numexpr/np':>12}")

    rng = np.random.default_rng(0)
    for size in sizes:
        n_rounds = large_rounds if size >= LARGE else rounds
        for dtype in (np.float32, np.float64):
            # Values in [0.5, 2): y is never near zero for x/y, sin and exp stay tame.
            host = {name: rng.uniform(0.5, 2.0, size).astype(dtype) for name in "abcxy"}
            # copy=False: the benchmark never writes the host arrays, and at 1e7
            # elements a second copy of every operand would only cost memory.
            lazy = {name: xp.asarray(a, copy=False) for name, a in host.items()}
            for label, operands, fn, expr in CASES:
                nargs = [host[k] for k in operands]
                xargs = [lazy[k] for k in operands]
                local = {k: host[k] for k in operands}
                fns = [lambda: xp.eval(fn(xp, *xargs)), lambda: fn(np, *nargs)]
                if ne is not None:
                    fns.append(lambda: ne.evaluate(expr, local_dict=local))

                # Check each implementation once, which also warms the plan cache.
                expected = fn(np, *nargs)
                for f in fns:
                    got = np.asarray(f())
                    np.testing.assert_equal(got.dtype, expected.dtype, err_msg=label)
                    tol = TOLERANCE[dtype]
                    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, err_msg=label)
                del expected, got

                plans_built = xp.debug.counters["plans_built"]
                samples = interleaved(fns, n_rounds, target_ns)
                if xp.debug.counters["plans_built"] != plans_built:
                    raise RuntimeError(f"{label}: the plan cache missed while timing")

                t_np = samples[1]
                numexpr_col = f"{median_ratio(samples[2], t_np):>12.2f}" if ne is not None else f"{'-':>12}"
                print(f"{label:<42}{np.dtype(dtype).name:<9}{size:>11,}{format_time(statistics.median(t_np)):>11}"
                      f"{median_ratio(samples[0], t_np):>11.2f}{numexpr_col}", flush=True)


def cpu_model():
    """The CPU's marketing name: platform.processor() gives only the architecture on Linux."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine():
    ne_version = f"{ne.__version__} ({ne.get_num_threads()} threads)" if ne else "not installed"
    # Other processes skew every column; the load average shows whether there were any.
    load = ", load average %.2f %.2f %.2f" % os.getloadavg() if hasattr(os, "getloadavg") else ""
    print(f"Machine: {platform.platform()}, {cpu_model()}, {os.cpu_count()} CPUs{load}")
    print(f"Python {platform.python_version()}, numpy {np.__version__}, numexpr {ne_version}, "
          f"arrayx {xp.__version__}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: fewer and shorter rounds")
    parser.add_argument("--sizes", nargs="+", type=float, metavar="N",
                        help="evaluation sizes in elements, e.g. 1e3 1e6 (default: 1e3 1e5 1e6 1e7)")
    args = parser.parse_args()
    sizes = [int(n) for n in args.sizes] if args.sizes else DEFAULT_SIZES

    start = time.perf_counter()
    machine()
    if args.quick:
        build_table(rounds=3)
        eval_table(sizes, rounds=3, large_rounds=1, target_ns=5e6)
    else:
        build_table(rounds=7)
        eval_table(sizes, rounds=9, large_rounds=7, target_ns=50e6)
    print(f"\nTotal time: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
