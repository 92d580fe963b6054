"""`python -m arrayx`: build a lazy graph, show it, evaluate it, check it against
NumPy, and take its gradient through the recorded graph."""

import time

import numpy as np

import arrayx as xp
from arrayx.autodiff import grad


def main():
    n = 1_000_000
    host = np.linspace(-6.0, 6.0, n)
    x = xp.asarray(host)

    def logistic(x):
        return 1 / (1 + xp.exp(-x))

    t0 = time.perf_counter()
    y = logistic(x)
    t_build = time.perf_counter() - t0
    rebuilds = 1000
    t0 = time.perf_counter()
    for _ in range(rebuilds):  # the steady-state cost, once the interpreter has warmed up
        logistic(x)
    t_rebuild = (time.perf_counter() - t0) / rebuilds

    print("logistic 1/(1+exp(-x)) over", n, "float64 elements, recorded lazily:\n")
    print(xp.graph(y))
    print(f"\ncomputed so far: {xp.debug.counters['steps_run']} steps (nothing runs before a force point)")
    print(f"fused into: {xp.debug.fused_groups(y)}")

    t0 = time.perf_counter()
    xp.eval(y)
    t_eval = time.perf_counter() - t0

    expected = 1 / (1 + np.exp(-host))
    err = float(np.max(np.abs(np.asarray(y) - expected)))
    print(f"\nevaluated on the {y.device.name} executor: {xp.debug.counters['steps_run']} step(s)")
    print("first values:", np.asarray(y[:3]))
    print(f"max |arrayx - numpy| = {err:.3g}", "(matches)" if err == 0.0 else "(DIFFERS)")
    print(f"graph build: {t_build * 1e6:.1f} us (first), {t_rebuild * 1e6:.1f} us (mean of {rebuilds} rebuilds)   "
          f"evaluation: {t_eval * 1e3:.2f} ms")

    # Reverse-mode autodiff walks the same recorded graph: d/dx sum(logistic(x)) = y * (1 - y).
    t0 = time.perf_counter()
    dy = grad(lambda v: xp.sum(logistic(v)))(x)
    xp.eval(dy)
    t_grad = time.perf_counter() - t0
    grad_err = float(np.max(np.abs(np.asarray(dy) - expected * (1 - expected))))
    print(f"\ngradient of sum(logistic(x)): max |arrayx - y(1-y)| = {grad_err:.3g} "
          f"({'matches' if grad_err < 1e-12 else 'DIFFERS'}), {t_grad * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
