"""What the scheduler did, counted for tests and benchmarks (read them as
`arrayx.debug.counters`). A leaf module: the namespace and the scheduler
count into it without importing the debugging tools above them.

`plans_built`: plans scheduled and compiled (plan cache misses, computations, jit traces).
`plan_variants_built`: variants of a cached plan compiled for a force that
keeps fewer of its results (once per pattern of held results, see
`scheduler.schedule`).
`plan_cache_hits`: forces that reused a cached plan.
`plans_rebound`: of those, forces that ran the plan of the same graph at other
extents with its reshapes, broadcasts and slices built again for theirs
(see `scheduler.schedule`).
`realizations`: force points that ran a plan.
`steps_run`: steps executed by force points and computation calls (a fused
group is one step, a data-dependent primitive one step).
`auto_realizations`: graphs realized because they grew past the depth limit.
`updates_in_place`: `x[key] = v` carried out at the call, in x's own buffer, by
an update (a write of one element straight into the buffer is not counted:
counting would add about a sixth to each such write).
`results_kept`: expensive results a force point kept because something else refers to them.
`gradients_rebuilt`: reverse sweeps (`grad`, `vjp`, `gradients`) whose gradient
graph was rebuilt from the template of an earlier sweep over a history of the
same structure instead of by the VJP rules (see `autodiff.templates`).
"""

counters = dict.fromkeys(
    ("plans_built", "plan_variants_built", "plan_cache_hits", "plans_rebound", "realizations", "steps_run",
     "auto_realizations", "updates_in_place", "results_kept", "gradients_rebuilt"), 0
)


def reset():
    """Set every counter to zero."""
    for key in counters:
        counters[key] = 0
