"""`xp.debug.profile()`: what ran, step by step, and where the time went.

The profiler is an observer of the scheduler (`scheduler.observe`, which
says what a step's time means on each executor): every step of every force
point, computation call and data-dependent primitive inside the scope is
recorded. `print(profile)` gives a table of steps grouped by what they were,
sorted by total time (as `torch.profiler`'s key averages), then the force
points, slowest first.
"""

from contextlib import contextmanager

from ..scheduler import observe
from .labels import size_text, type_text

# Force points listed by `str(profile)` (the slowest); the totals count all.
FORCE_POINTS_SHOWN = 20


class Profile:
    """The records of one `profile()` scope: `force_points` (observe.ForcePoint,
    in the order they ran) and `steps` (observe.StepRun, likewise)."""

    def __init__(self):
        self.force_points = []
        self.steps = []

    def step_ran(self, run):
        self.steps.append(run)

    def force_point_ran(self, force_point):
        self.force_points.append(force_point)

    def counts(self):
        """What the records add up to, under the names of `debug.counters`
        they match (plans_built, plan_cache_hits, realizations, steps_run),
        with computation_calls and transfers beside them."""
        plans = [f.plan for f in self.force_points]
        return {"plans_built": plans.count("built"), "plan_cache_hits": plans.count("cached"),
                "realizations": sum(f.kind != "computation" for f in self.force_points),
                "steps_run": sum(s.name != "transfer" for s in self.steps),
                "computation_calls": sum(f.kind == "computation" for f in self.force_points),
                "transfers": sum(s.name == "transfer" for s in self.steps)}

    def table(self):
        """The steps grouped by (what, device, executor, path, output types) with
        their calls, time and bytes, slowest first; then the force points."""
        rows = {}
        for s in self.steps:
            key = (s.what, s.device.name, s.executor, s.path or "-", " ".join(type_text(*t) for t in s.out_types))
            row = rows.setdefault(key, [0, 0.0, 0, 0, 0])
            row[0] += 1
            row[1] += s.seconds
            row[2] += s.bytes_read
            row[3] += s.bytes_written
            row[4] += s.in_place
        total = sum(s.seconds for s in self.steps) or 1.0
        header = ("step", "device", "executor", "path", "result", "calls", "total ms", "mean ms", "time %", "read",
                  "written", "in place")
        table = [header]
        for (what, device, executor, path, result), (calls, seconds, read, written, in_place) in sorted(
                rows.items(), key=lambda item: -item[1][1]):
            table.append((what, device, executor, path, result, str(calls), f"{seconds * 1e3:.3f}",
                          f"{seconds * 1e3 / calls:.3f}", f"{100 * seconds / total:.1f}", size_text(read),
                          size_text(written), str(in_place)))
        text = [_columns(table)]
        counts = self.counts()
        force_seconds = sum(f.seconds for f in self.force_points)
        text.append(f"\n{len(self.force_points)} force points ({counts['plans_built']} plans built, "
                    f"{counts['plan_cache_hits']} cached, {counts['computation_calls']} computation calls): "
                    f"{counts['steps_run']} steps, {counts['transfers']} transfers, {force_seconds * 1e3:.3f} ms "
                    f"({sum(s.seconds for s in self.steps) * 1e3:.3f} ms in steps)")
        numbered = sorted(enumerate(self.force_points, 1), key=lambda item: -item[1].seconds)
        table = [("force point", "kind", "plan", "steps", "transfers", "ms", "ms in steps")]
        for number, f in numbered[:FORCE_POINTS_SHOWN]:
            transfers = sum(s.name == "transfer" for s in f.steps)
            table.append((f"#{number}", f.kind, f.plan, str(len(f.steps) - transfers), str(transfers),
                          f"{f.seconds * 1e3:.3f}", f"{sum(s.seconds for s in f.steps) * 1e3:.3f}"))
        text.append(_columns(table))
        if len(numbered) > FORCE_POINTS_SHOWN:
            text.append(f"... and {len(numbered) - FORCE_POINTS_SHOWN} faster force points")
        return "\n".join(text)

    def __str__(self):
        return self.table()

    def __repr__(self):
        return f"<Profile: {len(self.force_points)} force points, {len(self.steps)} steps>"


def _columns(rows):
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows)


@contextmanager
def profile():
    """Record every step that runs inside the scope (see the module); yields
    the Profile. While a profile is active each step waits for its device
    (its time is its work's), and the first run of each plan compiles its
    observed program."""
    recording = Profile()
    observe.install(recording)
    try:
        yield recording
    finally:
        observe.remove(recording)
