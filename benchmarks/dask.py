"""The dask device against dask.array's own expressions, interleaved in one run.

    python benchmarks/dask.py                 # 1e7 and 1e8 elements, dask's threads
    python benchmarks/dask.py --large         # and run.py's workloads at 1e9 on a LocalCluster
    python benchmarks/dask.py --out-of-core   # a sum over 16 GB of float64, peak memory

For each size: a fused elementwise chain ending in a sum over `da.random`
data, as arrayx on the dask device (`from_dask`) and as dask.array, timed
alternately (median of the repeats); the ratio is arrayx's time over
dask's, and the task counts are those of the two graphs, as built and as
dask's optimizer hands them to the scheduler (it fuses dask.array's
elementwise layers into one task per chunk too).

--large runs the float32 chains and row reductions of benchmarks/run.py
over 1e9 elements (--size) on a LocalCluster of 2 one-thread worker
processes (127.0.0.1): each input is made by `da.random` and persisted
once, so it is resident in the workers' memory, and each workload ends in
a sum that the client receives (so neither library ships a 4 GB result);
the two libraries' sums are checked against each other before timing.
Each row also gives each worker's peak resident memory over that row
(its inputs and both libraries' runs).
--out-of-core sums 16 GB of float64 made by `da.random` (never held whole)
and reports the peak resident memory of this process and its children
against a 4 GB goal. cubed is not measured here. Needs
`pip install ".[dask]"` (psutil, which distributed brings, for the memory
figure; without it, getrusage's peak).
"""

import argparse
import gc
import importlib.util
import os
import sys
import threading
import time

# Run as a script, this file's folder comes first on sys.path, and this
# file would be what `import dask` finds.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402

import arrayx as xp  # noqa: E402
from arrayx.dask import from_dask, to_dask  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# run.py by path: this folder is off sys.path (see above), and run.py names no package.
_spec = importlib.util.spec_from_file_location("benchmarks_run", os.path.join(HERE, "run.py"))
run_py = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_py)

GOAL_BYTES = 4 << 30
ROW_LENGTH = 32000   # the reductions' rows: whole rows per chunk, 1e9 elements in 31250 rows
# (name, operand names, function of (namespace, *operands)): run.py's chains
# over 1-D x and y, and its row reductions over 2-D a.
RESIDENT_WORKLOADS = [(name, operands, fn) for name, operands, fn, _, _ in run_py.CHAINS] + [
    ("row softmax", "a", run_py.row_softmax), ("row logsumexp", "a", run_py.row_logsumexp)]
# Both sums are float32 over up to 1e9 terms, added in different orders
# (per block, per chunk, then a tree over chunks), so each carries a
# relative rounding error of order 1e-6 to 1e-5.
RESIDENT_RTOL = 1e-4


def chain(m, x):
    """Seven elementwise operations and a sum, in namespace `m` (arrayx or dask.array)."""
    return m.sum(m.sqrt(m.exp(x * 0.5) + m.sin(x) * x) * 2.0 - x)


def tasks(array):
    """The task counts of dask array `array`'s graph, as built and after dask's optimizer."""
    (optimized,) = dask.optimize(array)
    return f"{len(array.__dask_graph__())}/{len(optimized.__dask_graph__())}"


def compare(n, repeats):
    source = da.random.default_rng(0).random(n, chunks="auto")
    ours, theirs = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        value = float(chain(xp, from_dask(source)))
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        expected = float(chain(da, source).compute())
        theirs.append(time.perf_counter() - start)
        assert abs(value - expected) <= 1e-9 * abs(expected), (value, expected)
    t_ours, t_theirs = np.median(ours), np.median(theirs)
    print(f"{n:>12.0e} {len(source.chunks[0]):>7} {t_ours:>10.3f} {t_theirs:>10.3f} {t_ours / t_theirs:>7.2f}"
          f" {tasks(to_dask(chain(xp, from_dask(source)))):>12} {tasks(chain(da, source)):>12}", flush=True)


def resident_inputs(n, operands, client):
    """The named float32 operands of n elements, persisted in the cluster:
    1-D x and y in (0.5, 2) (y divides in tanh), 2-D a standard normal with
    whole rows per chunk."""
    rng = da.random.default_rng(0)
    made = {"x": rng.random(n, chunks="auto", dtype=np.float32) * 1.5 + 0.5,
            "y": rng.random(n, chunks="auto", dtype=np.float32) * 1.5 + 0.5,
            "a": rng.standard_normal((n // ROW_LENGTH, ROW_LENGTH), chunks=("auto", -1), dtype=np.float32)}
    return [client.persist(made[name]) for name in operands]


def worker_peaks(client):
    """Each worker process's peak resident memory since the last reset, in GiB, as "a/b"."""
    return "/".join(f"{peak / 2**30:.2f}" for peak in client.run(peak_rss_of_this_process).values())


def compare_resident(name, fn, inputs, repeats, client):
    """Time workload `fn` over the persisted dask arrays `inputs`, ending in a
    sum, as arrayx and as dask.array, alternately; check they agree first."""
    from distributed import wait
    wait(inputs)

    def ours():
        return xp.sum(fn(xp, *map(from_dask, inputs)))

    def theirs():
        return da.sum(fn(da, *inputs))
    # the sums as Python floats, which the client receives
    computes = {"arrayx": lambda: float(ours()), "dask": lambda: float(theirs().compute())}
    value, expected = computes["arrayx"](), computes["dask"]()
    assert abs(value - expected) <= RESIDENT_RTOL * abs(expected), (name, value, expected)
    times = {library: [] for library in computes}
    for _ in range(repeats):
        for library, compute in computes.items():
            start = time.perf_counter()
            compute()
            times[library].append(time.perf_counter() - start)
    t_ours, t_theirs = np.median(times["arrayx"]), np.median(times["dask"])
    print(f"{name:<24} {'x'.join(map(str, inputs[0].shape)):>12} {inputs[0].numblocks[0]:>7} {t_ours:>10.2f}"
          f" {t_theirs:>10.2f} {t_theirs / t_ours:>8.2f} {tasks(to_dask(ours())):>12} {tasks(theirs()):>12}"
          f" {worker_peaks(client):>11}", flush=True)


def resident(n, repeats, client):
    """run.py's chains and row reductions over n float32 elements resident in the cluster."""
    print(f"{'workload':<24} {'shape':>12} {'chunks':>7} {'arrayx s':>10} {'dask s':>10} {'speed-up':>8}"
          f" {'arrayx tasks':>12} {'dask tasks':>12} {'peak GiB':>11}")
    for name, operands, fn in RESIDENT_WORKLOADS:
        client.run(reset_peak_rss)   # each row's peaks: its inputs and both libraries' runs
        inputs = resident_inputs(n, operands, client)
        compare_resident(name, fn, inputs, repeats, client)
        del inputs   # released before the next workload's are made
        gc.collect()


def peak_memory(run):
    """(run's result, peak resident bytes of this process and its children while it ran)."""
    try:
        import psutil
    except ImportError:
        import resource
        result = run()
        kib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
               + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        return result, kib * 1024
    me = psutil.Process()
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            rss = me.memory_info().rss
            for child in me.children(recursive=True):
                try:
                    rss += child.memory_info().rss
                except psutil.NoSuchProcess:
                    pass
            peak[0] = max(peak[0], rss)
            done.wait(0.05)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        result = run()
    finally:
        done.set()
        sampler.join()
    return result, peak[0]


def peak_rss_of_this_process():
    """Peak resident bytes of the calling process since it started or since
    `reset_peak_rss` (run on each worker by `Client.run`). Linux's VmHWM:
    getrusage's maxrss would also count the parent's memory at fork, which
    Linux keeps across exec."""
    with open("/proc/self/status") as status:
        kib = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    return kib * 1024


def reset_peak_rss():
    """Start the calling process's peak resident memory afresh (Linux's clear_refs)."""
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")


def out_of_core():
    n = 2 * 10**9   # 16 GB of float64
    source = da.random.default_rng(0).random(n, chunks="auto")
    start = time.perf_counter()
    total, peak = peak_memory(lambda: float(xp.sum(from_dask(source))))
    seconds = time.perf_counter() - start
    print(f"sum of {n:.0e} float64 ({n * 8 / 1e9:.0f} GB, {len(source.chunks[0])} chunks of "
          f"{source.chunks[0][0] * 8 / 2**20:.0f} MiB): {total:.6e} (expected about {n / 2:.6e}) in {seconds:.1f} s, "
          f"peak RSS {peak / 2**30:.2f} GiB, goal {GOAL_BYTES / 2**30:.0f} GiB: "
          f"{'met' if peak <= GOAL_BYTES else 'MISSED'}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--large", action="store_true",
                        help="also run.py's chains and reductions at 1e9 float32 on a 2-worker LocalCluster")
    parser.add_argument("--size", type=float, default=1e9, help="elements of each --large input (default 1e9)")
    parser.add_argument("--out-of-core", action="store_true", help="a sum over 16 GB of float64, peak memory")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"dask {dask.__version__}, chunk size {dask.config.get('array.chunk-size')}, {os.cpu_count()} cores")
    print(f"{'elements':>12} {'chunks':>7} {'arrayx s':>10} {'dask s':>10} {'ratio':>7} {'arrayx tasks':>12} "
          f"{'dask tasks':>12}")
    with dask.config.set(scheduler="threads"):
        for n in (10**7, 10**8):
            compare(n, args.repeats)
    if args.large:
        from distributed import Client, LocalCluster
        with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as cluster, \
                Client(cluster) as client:
            n = int(args.size)
            print(f"LocalCluster, 2 worker processes of 1 thread; float32 inputs of {n:.0e} elements persisted;"
                  " speed-up = dask s / arrayx s; tasks as built/after dask.optimize; peak RSS of each worker")
            resident(n, max(1, args.repeats // 2), client)
    if args.out_of_core:
        with dask.config.set(scheduler="threads"):
            out_of_core()


if __name__ == "__main__":
    main()
