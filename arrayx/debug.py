"""Counters that tests and benchmarks read to see what the scheduler did.

`plans_built`: plans scheduled and compiled (plan cache misses).
`plan_cache_hits`: forces that reused a cached plan.
`realizations`: force points that ran a plan.
`steps_run`: primitive steps executed.
`auto_realizations`: graphs realized because they grew past the depth limit.
"""

counters = dict.fromkeys(
    ("plans_built", "plan_cache_hits", "realizations", "steps_run", "auto_realizations"), 0
)


def reset():
    """Set every counter to zero."""
    for key in counters:
        counters[key] = 0
