"""Tools to see what arrayx does and why it is slow.

- `counters` (see `arrayx.counters` for what each counts) and `reset()`;
- `profile()`: every step that runs in a scope, with its time and bytes;
- `set_log_level` / ARRAYX_LOG: a line per force point or per step;
- `explain(*arrays)`: the plan the next force would run;
- `fused_groups(*arrays)`: its fused groups;
- `describe`, `dot`, `svg`: the views of a graph behind `xp.graph`;
- `unfused()`, `free_held_memory()`: references and memory measurements;
- `cpu_kernels(path)`: run the CPU's fused groups natively or on NumPy;
  `wait_for_kernels()` and `kernel_counts()`: the native kernels' compiles.
- `eager()`: every operation computed at its call (`xp.set_eager`).
"""

from contextlib import contextmanager

from .. import executors
from .._cpu import native
from .._cpu.native import compiler as native_compiler
from ..counters import counters, reset  # noqa: F401  (the debugging tools users reach for)
from ..namespace.build import eager_mode, set_eager
from ..scheduler import fuse, schedule
from .explain import explain  # noqa: F401
from .graph_view import FORMATS, describe, dot, svg  # noqa: F401  (xp.graph's views)
from .log import level_from_environment, set_log_level
from .profile import Profile, profile  # noqa: F401

__all__ = ["counters", "reset", "profile", "Profile", "set_log_level", "explain", "fused_groups", "describe", "dot",
           "svg", "free_held_memory", "unfused", "cpu_kernels", "wait_for_kernels", "kernel_counts", "eager"]


def fused_groups(*arrays):
    """The fused groups the next force of `arrays` would run (computes nothing)."""
    return schedule.plan_for([a._node for a in arrays]).groups


def free_held_memory():
    """Give back the memory every executor keeps for reuse (the CPU
    executor's pool of large results, the GPU's memory pool): for memory
    measurements, or before handing the memory to other code."""
    for device in executors.devices():
        executors.executor_for(device).free_held_memory()


@contextmanager
def unfused():
    """Within this scope plans run every node as its own step, as before
    fusion: a reference when a fused result is in doubt. Plans cached on
    either side of the scope are forgotten."""
    schedule.clear_plan_cache()
    fuse.ENABLED = False
    try:
        yield
    finally:
        fuse.ENABLED = True
        schedule.clear_plan_cache()


@contextmanager
def cpu_kernels(path):
    """Within this scope the CPU executor runs fused groups on `path`:
    "native" (each group's compiled kernel, built at its first call; lone
    elementwise steps and reductions too), "numpy", or "auto" (native once
    compiled in the background), as ARRAYX_CPU_KERNELS does for a whole
    process. Plans cached on either side of the scope are forgotten."""
    before = native.mode
    native.set_mode(path)
    schedule.clear_plan_cache()
    try:
        yield
    finally:
        native.set_mode(before)
        schedule.clear_plan_cache()


def wait_for_kernels():
    """Wait until the native kernels being compiled in the background are
    ready (benchmarks time them, not the NumPy path they replace)."""
    native_compiler.wait_for_compiles()


def kernel_counts():
    """The CPU's native kernels this process compiled, found in the disk
    cache, and the seconds its compiles took."""
    return dict(native_compiler.counts)


@contextmanager
def eager():
    """Within this scope each operation is computed at its call, as after
    `xp.set_eager(True)`: an error that depends on values is raised by its
    line, and a debugger sees values. The mode before the scope comes back
    after it."""
    before = eager_mode()
    set_eager(True)
    try:
        yield
    finally:
        set_eager(before)


set_log_level(level_from_environment())
