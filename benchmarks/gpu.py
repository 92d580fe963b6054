"""arrayx on a CUDA GPU against its goals, PyTorch and CuPy, interleaved in one run.

    python benchmarks/gpu.py                     # every workload, about 2 minutes on an H100
    python benchmarks/gpu.py --quick             # fewer rounds, 1e7 elements, 4096x4096 matrices
    python benchmarks/gpu.py --device cuda:1     # another GPU
    ARRAYX_GPU_EMULATION=1 python benchmarks/gpu.py --smoke   # every workload once, tiny (CI)

Needs PyCUDA and a CUDA device (`pip install ".[gpu]"`); exits with status 2
where arrayx registers none. --smoke runs each workload once on a few
thousand elements, checking its results and judging no goal (CI runs it on
the emulated device, tests/test_gpu_benchmark.py). PyTorch and CuPy are
optional peers: a workload whose peer is absent prints arrayx's time alone
(the 6-op chain is compared with PyTorch eager, labelled so, where CuPy is
absent).

Each row gives arrayx's and the peer's median time per call and the measure
its goal is stated in: effective bandwidth (bytes the ideal fused kernel
moves, inputs read once and the output written once, over the time) beside a
device-to-device copy moving as many bytes; a speedup peer/arrayx; or a time
per call. Ratios are medians over rounds of the ratio measured in the same
round (arrayx and its peer alternate within each round, so drift cancels).
Each timed batch starts and ends with the device idle, so times are of the
kernels, not of their launch alone. arrayx builds a fresh graph and evaluates
it in every call, with the plan cache warm. Every result is checked against
NumPy once before it is timed. GEMM runs with TF32 off on both sides. Nothing
here asserts a timing: "met" says whether this run reached the goal (with
--quick the sizes are smaller than the goals are stated for).
"""

import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np

# Benchmark the checkout this script lives in, not an installed copy.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import arrayx as xp  # noqa: E402
from arrayx import executors  # noqa: E402
from arrayx._gpu.cuda_runtime import CudaRuntime  # noqa: E402
from run import CHAINS, fmt_time  # noqa: E402  (run.py beside this file; importing it runs nothing)

try:
    import torch
except ImportError:
    torch = None

try:
    import cupy
except ImportError:
    cupy = None


class Bench:
    """The device, the peers that run on it, and interleaved GPU timing."""

    def __init__(self, device, rounds, target_ns, judged=True):
        self.device = device
        self.judged = judged   # whether rows say if a goal was met
        self.executor = executors.executor_for(device)
        self.ordinal = int(device.name.split(":")[1])
        self.rounds, self.target_ns = rounds, target_ns
        self.torch = torch if torch is not None and torch.cuda.is_available() else None
        self.cupy = cupy
        if cupy is not None:
            try:
                cupy.cuda.Device(self.ordinal).use()
            except cupy.cuda.runtime.CUDARuntimeError as e:
                print(f"cupy {cupy.__version__} cannot use {device.name} ({e}): left out")
                self.cupy = None
        self.met = []
        self.sync()   # the peers set up their CUDA state now, not inside the first timed call

    def sync(self):
        """Wait until the work queued by arrayx and by the peers has finished."""
        self.executor.synchronize()
        if self.torch:
            self.torch.cuda.synchronize(self.ordinal)
        if self.cupy:
            self.cupy.cuda.Device(self.ordinal).synchronize()

    def time_batch(self, fn, count):
        # Kernels run asynchronously: start with the device idle and stop the
        # clock only when the last one has finished.
        self.sync()
        t0 = time.perf_counter_ns()
        for _ in range(count):
            fn()
        self.sync()
        return (time.perf_counter_ns() - t0) / count

    def interleaved(self, fns):
        """Per-round ns per call of each function, interleaved within each
        round; calls are batched so one sample lasts about `target_ns`."""
        counts = [max(1, round(self.target_ns / self.time_batch(fn, 1))) for fn in fns]
        built = xp.debug.counters["plans_built"]
        samples = [[] for _ in fns]
        for _ in range(self.rounds):
            for fn, count, out in zip(fns, counts, samples):
                out.append(self.time_batch(fn, count))
        if xp.debug.counters["plans_built"] != built:
            raise RuntimeError("the plan cache missed while timing")
        return samples

    def row(self, name, size, ax, peer, peer_samples, result, goal, met):
        """Print one row; `met` is True, False, or None where no goal applies."""
        met = met if self.judged else None
        peer_time = fmt_time(statistics.median(peer_samples)) if peer_samples else "-"
        verdict = {True: "yes", False: "no", None: "-"}[met]
        print(f"{name:<28}{size:>13}{fmt_time(statistics.median(ax)):>10}  {peer:<27}{peer_time:>9}  "
              f"{result:<34}{goal:<24}{verdict}", flush=True)
        if met is not None:
            self.met.append(met)

    def on_device(self, host):
        """`host` as an arrayx array and a torch tensor (None without torch) on the device."""
        return (xp.asarray(host, device=self.device),
                self.torch.from_numpy(host).to(self.device.name) if self.torch else None)


HEADER = f"{'workload':<28}{'size':>13}{'arrayx':>10}  {'peer':<27}{'its time':>9}  {'result':<34}{'goal':<24}met"


def check(name, got, want, rtol, atol):
    """Raise unless `got` (arrayx, torch or cupy) has NumPy's values `want`;
    arrayx's result must also be float32, as every workload's inputs are."""
    if isinstance(got, xp.Array):
        if got.dtype != xp.float32:
            raise AssertionError(f"{name}: arrayx gave {got.dtype}, not float32")
        got = np.asarray(got.to_device("cpu"))
    elif cupy is not None and isinstance(got, cupy.ndarray):
        got = cupy.asnumpy(got)
    elif torch is not None and isinstance(got, torch.Tensor):
        got = got.cpu().numpy()
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)


def device_copy(bench, nbytes):
    """A device-to-device copy of `nbytes` (cuMemcpyDtoDAsync) on arrayx's
    stream: what a kernel moving 2 * nbytes can hope to reach."""
    ex, runtime = bench.executor, bench.executor.runtime
    with runtime.active():
        src = ex.allocate((-(-nbytes // 4),), xp.float32, "the copy's source")
        dst = ex.allocate((-(-nbytes // 4),), xp.float32, "the copy's destination")

    def copy():
        with runtime.active():
            runtime.copy_dtod(dst.ptr, src.ptr, nbytes)
    return copy


def bandwidth_row(bench, name, size, fn, traffic, goal_tbs):
    """Time `fn`, which moves `traffic` bytes at best, interleaved with a copy
    moving as many, and print its effective bandwidth."""
    ax, cp = bench.interleaved([fn, device_copy(bench, traffic // 2)])
    tbs = traffic / statistics.median(ax) / 1e3     # bytes per ns are GB/s
    copy_tbs = traffic / statistics.median(cp) / 1e3
    of_copy = statistics.median(c / a for a, c in zip(ax, cp))
    bench.row(name, f"{size:,}", ax, "DtoD copy, same bytes", cp,
              f"{tbs:.2f} TB/s = {of_copy:.2f}x copy's {copy_tbs:.2f}", f">= {goal_tbs} TB/s", tbs >= goal_tbs)


def bandwidth(bench, size):
    """The fused chains of run.py and a full sum, over `size` float32."""
    rng = np.random.default_rng(0)
    host = {k: rng.uniform(0.5, 2.0, size).astype(np.float32) for k in "xy"}
    lazy = {k: xp.asarray(v, device=bench.device) for k, v in host.items()}
    for name, operands, fn, *_ in CHAINS:   # (name, operands, fn, numexpr form, NumPy in-place form)
        args = [lazy[k] for k in operands]
        # The GPU's expf/tanhf differ from NumPy's by a few ulp.
        check(name, xp.eval(fn(xp, *args)), fn(np, *[host[k] for k in operands]), 1e-5, 1e-5)
        # 2.5 TB/s is 85 % of what a copy reaches on an H100.
        bandwidth_row(bench, name, size, lambda: xp.eval(fn(xp, *args)), (len(operands) + 1) * 4 * size, 2.5)
    x = lazy["x"]
    # A float32 sum of 1e8 positive terms in a tree stays within 1e-4 of the
    # exact (float64) sum; one running float32 total would not.
    check("sum", xp.eval(xp.sum(x)), np.sum(host["x"], dtype=np.float64), 1e-4, 0)
    bandwidth_row(bench, "sum", size, lambda: xp.eval(xp.sum(x)), 4 * size, 2.4)


def six_op_chain(bench, size):
    """A 6-op chain against CuPy eager (a kernel an op) and `cupy.fuse` (one
    kernel); against PyTorch eager, labelled so, where CuPy is absent."""
    def chain(m, x, y):
        return (x * y + 1.5) * m.exp(-x) - y   # *, +, negative, exp, *, -

    rng = np.random.default_rng(1)
    hx, hy = (rng.uniform(0.5, 2.0, size).astype(np.float32) for _ in range(2))
    (ax, tx), (ay, ty) = bench.on_device(hx), bench.on_device(hy)
    fns = [lambda: xp.eval(chain(xp, ax, ay))]
    peers = []   # (label, goal as a speedup or None)
    if bench.cupy:
        cx, cy = bench.cupy.asarray(hx), bench.cupy.asarray(hy)

        @bench.cupy.fuse(kernel_name="six_op_chain")
        def fused(x, y):
            return chain(bench.cupy, x, y)
        fns += [lambda: chain(bench.cupy, cx, cy), lambda: fused(cx, cy)]
        peers += [("cupy eager", 3.0), ("cupy.fuse", 1.0)]
    elif bench.torch:
        fns.append(lambda: chain(bench.torch, tx, ty))
        peers.append(("torch eager (cupy absent)", None))
    want = chain(np, hx, hy)
    for fn in fns:
        check("6-op chain", fn(), want, 1e-5, 1e-5)   # as the chains above; peers: values only
    samples = bench.interleaved(fns)
    if not peers:
        bench.row("6-op chain", f"{size:,}", samples[0], "cupy and torch absent", None, "-", ">= 3x cupy eager", None)
    for (label, goal), peer in zip(peers, samples[1:]):
        ratio = statistics.median(p / a for a, p in zip(samples[0], peer))
        goal_text = f">= {goal:g}x" if goal else "3x is cupy eager's goal"
        bench.row("6-op chain", f"{size:,}", samples[0], label, peer, f"{ratio:.2f}x",
                  goal_text, None if goal is None else ratio >= goal)


def ratio_row(bench, name, size, ax_fn, torch_fn, label, goal):
    """A row comparing arrayx with a torch function, or arrayx alone without torch."""
    if torch_fn is None:
        ax = bench.interleaved([ax_fn])[0]
        bench.row(name, size, ax, f"{label} absent", None, "-", f">= {goal:g}x", None)
        return
    ax, peer = bench.interleaved([ax_fn, torch_fn])
    ratio = statistics.median(p / a for a, p in zip(ax, peer))
    bench.row(name, size, ax, label, peer, f"{ratio:.2f}x", f">= {goal:g}x", ratio >= goal)


def softmax_and_gemm(bench, n):
    rng = np.random.default_rng(2)

    def softmax(m, v):
        e = m.exp(v - m.max(v, axis=1, keepdims=True))
        return e / m.sum(e, axis=1, keepdims=True)

    a = rng.standard_normal((n, n)).astype(np.float32)
    x, t = bench.on_device(a)
    torch_fn = (lambda: bench.torch.softmax(t, dim=1)) if bench.torch else None
    # exp differs by a few ulp between libraries and row sums by summation order.
    for fn in [lambda: xp.eval(softmax(xp, x))] + ([torch_fn] if torch_fn else []):
        check("softmax", fn(), softmax(np, a), 1e-5, 0)
    ratio_row(bench, f"row softmax {n}x{n}", f"{n}x{n}", lambda: xp.eval(softmax(xp, x)), torch_fn,
              "torch.softmax", 1.0)

    b = rng.standard_normal((n, n)).astype(np.float32)
    (xa, ta), (xb, tb) = bench.on_device(a), bench.on_device(b)
    torch_fn = (lambda: bench.torch.matmul(ta, tb)) if bench.torch else None
    want = a @ b
    # Entries are about sqrt(n) (90 at n = 8192): float32 sums of n products differ by
    # summation order well below 1e-2, while TF32 (10-bit mantissa) would be
    # off by about 0.05, so this also checks that TF32 is off.
    for fn in [lambda: xp.eval(xa @ xb)] + ([torch_fn] if torch_fn else []):
        check("GEMM", fn(), want, 0, 1e-2)
    ratio_row(bench, f"GEMM {n}^3, TF32 off", f"{n}^3", lambda: xp.eval(xa @ xb), torch_fn,
              "torch.matmul", 0.9)


def cached_plan(bench):
    """Graph build, plan-cache hit, launch and synchronize of a 10-op chain
    on 1e3 float32: the cost of one force point."""
    def chain(m, v):
        return m.sin(m.sin(m.sin(v * v + v) * v + v) * v + v) * v

    a = np.linspace(0, 1, 1000, dtype=np.float32)
    x, t = bench.on_device(a)
    check("10-op chain", xp.eval(chain(xp, x)), chain(np, a), 1e-5, 1e-6)   # sinf differs by a few ulp

    def force():
        xp.eval(chain(xp, x))
        bench.executor.synchronize()
    fns = [force]
    if bench.torch:
        def torch_call():
            chain(bench.torch, t)
            bench.torch.cuda.synchronize(bench.ordinal)
        fns.append(torch_call)
    samples = bench.interleaved(fns)
    us = statistics.median(samples[0]) / 1e3
    peer = "torch eager + synchronize" if bench.torch else "torch absent"
    bench.row("cached plan, 10-op chain", f"{a.size:,}", samples[0], peer, samples[1] if bench.torch else None,
              f"{us:.1f} us per force point", "<= 30 us", us <= 30)


def machine(bench):
    runtime = bench.executor.runtime
    line = (f"Device: {bench.device.name}, {runtime.name} (sm_{runtime.compute_capability[0]}"
            f"{runtime.compute_capability[1]}, {runtime.sm_count} SMs, {runtime.total_memory / 2**30:.1f} GiB)")
    versions = ""
    if isinstance(runtime, CudaRuntime):
        import pycuda
        driver = runtime.cuda.get_driver_version()
        line += f", driver CUDA {driver // 1000}.{driver % 1000 // 10}"
        versions = f", PyCUDA {pycuda.VERSION_TEXT}"
    print(line)
    torch_version = (torch.__version__ + ("" if bench.torch else " (no CUDA)")) if torch else "not installed"
    cupy_version = (cupy.__version__ + ("" if bench.cupy else " (left out)")) if cupy else "not installed"
    print(f"Python {platform.python_version()}, numpy {np.__version__}, arrayx {xp.__version__}{versions}, "
          f"torch {torch_version}, cupy {cupy_version}")
    print("TF32: off (arrayx: cublas.Blas.allow_tf32 = False, ARRAYX_TF32 unset; "
          "torch: torch.backends.cuda.matmul.allow_tf32 = False)")
    print(f"{bench.rounds} rounds of about {bench.target_ns / 1e6:.0f} ms a sample; "
          "result: effective bandwidth, speedup peer time / arrayx time, or time per call\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sizes = parser.add_mutually_exclusive_group()
    sizes.add_argument("--quick", action="store_true", help="fewer rounds, 1e7 elements, 4096x4096 matrices")
    sizes.add_argument("--smoke", action="store_true", help="each workload once, tiny sizes, results checked")
    parser.add_argument("--device", default="cuda:0", help="the arrayx device to run on (default cuda:0)")
    args = parser.parse_args()
    named = {d.name: d for d in xp.__array_namespace_info__().devices()}
    if not any(name.startswith("cuda:") for name in named):
        print("no CUDA device registered by arrayx (PyCUDA and a GPU are needed)")
        return 2
    if not args.device.startswith("cuda:") or args.device not in named:
        print(f"{args.device} is not a CUDA device of arrayx here; devices: {sorted(named)}")
        return 2
    if os.environ.get("ARRAYX_TF32") == "1":
        print("ARRAYX_TF32=1 is set: this benchmark measures GEMM with TF32 off; unset it")
        return 2
    from arrayx._gpu import cublas
    cublas.Blas.allow_tf32 = False
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = False
    # (elements, elements of the 6-op chain, matrix size, rounds, ns a sample)
    size, chain_size, n, rounds, target = ((4096, 4096, 64, 1, 0) if args.smoke else
                                           (10**7, 10**7, 4096, 3, 20e6) if args.quick else
                                           (10**8, 10**7, 8192, 9, 100e6))
    bench = Bench(named[args.device], rounds, target, judged=not args.smoke)
    start = time.perf_counter()
    machine(bench)
    print(HEADER)
    bandwidth(bench, size)
    six_op_chain(bench, chain_size)
    softmax_and_gemm(bench, n)
    cached_plan(bench)
    print(f"\nGoals met: {sum(bench.met)} of {len(bench.met)}"
          + (" (--quick: smaller sizes than the goals are stated for)" if args.quick else "")
          + (" (--smoke: tiny sizes, goals not judged)" if args.smoke else ""))
    print(f"Total time: {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
