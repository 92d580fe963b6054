"""`xp.debug.explain(*arrays)`: the plan the next force of some arrays runs,
as the scheduler's passes left it (computes nothing)."""

from ..scheduler import schedule
from .labels import label, type_text


def _types(shape, dtype):
    if isinstance(dtype, tuple):
        return "(" + ", ".join(type_text(s, d) for s, d in zip(shape, dtype)) + ")"
    return type_text(shape, dtype)


def _slots(slots):
    return ", ".join(map(str, slots))


def explain(*arrays):
    """The plan for forcing `arrays` together: one line per step (what it
    computes, its input and output types, the slots it reads, writes and
    frees, which device and executor run it), the fused groups, the
    transfers between executors, and where a step writes its result into an
    input that dies there (in place)."""
    plan = schedule.plan_for([a._node for a in arrays])
    n_transfers = sum(s.transfer is not None for s in plan.segments)
    lines = [f"plan: {plan.steps} steps, fused groups: {len(plan.groups)}, transfers: {n_transfers}, "
             f"slots: {plan.n_slots}; results in slots {_slots(plan.outputs[:len(arrays)])}"]
    number = 0
    for segment in plan.segments:
        if segment.transfer is not None:
            s, t, source, target, shape, dtype, _ = segment.transfer
            lines.append(f"transfer slot {s} ({_types(shape, dtype)}) from the {source.name} executor to the "
                         f"{target.name} executor -> slot {t}")
            continue
        ex = segment.executor
        lines.append(f"{ex.name} executor:")
        kernels = ex.kernels(segment.steps, segment.drops)
        for step, drop, (_, into, in_place) in zip(segment.steps, segment.drops, kernels):
            number += 1
            inputs = ", ".join(type_text(*t) for t in step.in_types)
            line = (f"  {number}. {label(step.op, step.attrs, step.shape, step.dtype)}"
                    f"{f'({inputs})' if inputs else ''} -> "
                    f"{_types(step.shape, step.dtype)} on {step.device.name}: slots [{_slots(step.args)}] -> "
                    f"{_slots(step.outs)}")
            if drop:
                line += f", frees {_slots(sorted(drop))}"
            if into is not None:
                line += f", in place: writes into slot {step.args[into]}, which dies here"
            elif in_place is not None:
                line += f", in place when nothing else holds slot {step.args[0]} when it runs"
            lines.append(line)
    return "\n".join(lines)
