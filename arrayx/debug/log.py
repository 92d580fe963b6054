"""ARRAYX_LOG: a line per force point (level 1) or per step too (level 2)
on standard error, as tinygrad's DEBUG levels do. Set the environment
variable for a whole process, or call `set_log_level` (level 0 stops it)."""

import os
import sys

from ..scheduler import observe
from .labels import size_text, type_text


class Log:
    """An observer of the scheduler that prints what ran (see the module)."""

    def __init__(self, level):
        self.level = level

    def step_ran(self, run):
        if self.level >= 2:
            types = ", ".join(type_text(*t) for t in run.in_types)
            result = ", ".join(type_text(*t) for t in run.out_types)
            in_place = ", in place" if run.in_place else ""
            print(f"arrayx:   {run.what}({types}) -> {result} on {run.device.name} by {run.ran_by}: "
                  f"{run.seconds * 1e3:.3f} ms, {size_text(run.bytes_read)} read, "
                  f"{size_text(run.bytes_written)} written{in_place}", file=sys.stderr)

    def force_point_ran(self, force_point):
        print(f"arrayx: {force_point.kind}, plan {force_point.plan}: {len(force_point.steps)} steps, "
              f"{force_point.seconds * 1e3:.3f} ms", file=sys.stderr)


def set_log_level(level):
    """Print a line per force point (1), per step too (2), or nothing (0)."""
    if level not in (0, 1, 2):
        raise ValueError(f"set_log_level: level must be 0, 1 or 2, got {level!r}")
    for observer in observe.observers:
        if isinstance(observer, Log):
            observe.remove(observer)
    if level:
        observe.install(Log(level))


def level_from_environment():
    """The level ARRAYX_LOG names (0 when it is unset or empty)."""
    value = os.environ.get("ARRAYX_LOG", "")
    if value not in ("", "0", "1", "2"):
        raise RuntimeError(f"ARRAYX_LOG={value!r}: expected 0, 1 or 2")
    return int(value or 0)
