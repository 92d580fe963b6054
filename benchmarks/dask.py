"""The dask device against dask.array's own expressions, interleaved in one run.

    python benchmarks/dask.py                 # 1e7 and 1e8 elements, dask's threads
    python benchmarks/dask.py --large         # and 1e9 on a LocalCluster (2 workers, 127.0.0.1)
    python benchmarks/dask.py --out-of-core   # a sum over 16 GB of float64, peak memory

For each size: a fused elementwise chain ending in a sum over `da.random`
data, as arrayx on the dask device (`from_dask`) and as dask.array, timed
alternately (median of the repeats); the ratio is arrayx's time over
dask's, and the task counts are those of the two graphs. --out-of-core sums
16 GB of float64 made by `da.random` (never held whole) and reports the
peak resident memory of this process and its children against a 4 GB goal.
--large also gives each worker's peak resident memory over the 1e9 runs.
Needs `pip install ".[dask]"` (psutil, which distributed brings, for the
memory figure; without it, getrusage's peak).
"""

import argparse
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

GOAL_BYTES = 4 << 30


def chain(m, x):
    """Seven elementwise operations and a sum, in namespace `m` (arrayx or dask.array)."""
    return m.sum(m.sqrt(m.exp(x * 0.5) + m.sin(x) * x) * 2.0 - x)


def tasks(array):
    return len(array.__dask_graph__())


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
    """Peak resident bytes of the calling process so far (run on each worker by `Client.run`)."""
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024   # Linux counts KiB


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
    parser.add_argument("--large", action="store_true", help="also 1e9 elements on a 2-worker LocalCluster")
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
            print("LocalCluster, 2 worker processes of 1 thread:")
            compare(10**9, max(1, args.repeats // 2))
            peaks = client.run(peak_rss_of_this_process).values()
            print("peak RSS per worker over both libraries' runs: "
                  + ", ".join(f"{peak / 2**30:.2f} GiB" for peak in peaks), flush=True)
    if args.out_of_core:
        with dask.config.set(scheduler="threads"):
            out_of_core()


if __name__ == "__main__":
    main()
