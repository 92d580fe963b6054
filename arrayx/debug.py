"""What the scheduler did and would do, for tests and benchmarks, and the
memory executors hold for reuse.

Counters:

`plans_built`: plans scheduled and compiled (plan cache misses, computations, jit traces).
`plan_cache_hits`: forces that reused a cached plan.
`realizations`: force points that ran a plan.
`steps_run`: steps executed (a fused group is one step).
`auto_realizations`: graphs realized because they grew past the depth limit.
`updates_in_place`: `x[key] = v` carried out at the call, in x's own buffer.
`results_kept`: expensive results a force point kept because something else refers to them.
"""

from contextlib import contextmanager

counters = dict.fromkeys(
    ("plans_built", "plan_cache_hits", "realizations", "steps_run", "auto_realizations",
     "updates_in_place", "results_kept"), 0
)


def reset():
    """Set every counter to zero."""
    for key in counters:
        counters[key] = 0


def fused_groups(*arrays):
    """The fused groups the next force of `arrays` would run (computes nothing)."""
    from .scheduler.schedule import plan_for  # the scheduler imports this module for its counters
    return plan_for([a._node for a in arrays]).groups


def free_held_memory():
    """Give back the memory every executor keeps for reuse (the CPU
    executor's pool of large results, the GPU's memory pool): for memory
    measurements, or before handing the memory to other code."""
    from . import executors
    for device in executors.devices():
        executors.executor_for(device).free_held_memory()


@contextmanager
def unfused():
    """Within this scope plans run every node as its own step, as before
    fusion: a reference when a fused result is in doubt. Plans cached on
    either side of the scope are forgotten."""
    from .scheduler import fuse, schedule
    schedule.clear_plan_cache()
    fuse.ENABLED = False
    try:
        yield
    finally:
        fuse.ENABLED = True
        schedule.clear_plan_cache()
