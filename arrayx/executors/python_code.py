"""Functions compiled from generated Python source, each text compiled once.

A fused group's NumPy kernel (the CPU executor) and a segment's program
(executors.base) are Python functions written as text: a line per
instruction or step, with no loop over a table at run time. The text names
kernels and constants but holds no shape or buffer, so a group at a new
extent, a plan's variant or another graph of the same structure reuses its
compiled code: compiling is most of the cost of building such a function.
Texts are few (one per instruction pattern or plan structure); a bound keeps
odd programs from growing the cache.
"""

_compiled = {}
_COMPILED_TEXTS = 4096


def generated(lines, names, name):
    """The function `name` that the Python source `lines` defines, run with
    the global `names` (the kernels and constants it calls; `names` is its
    globals from then on)."""
    text = "\n".join(lines)
    code = _compiled.get(text)
    if code is None:
        if len(_compiled) >= _COMPILED_TEXTS:
            _compiled.clear()
        code = _compiled[text] = compile(text, "<generated>", "exec")
    exec(code, names)
    return names.pop(name)   # not kept in its own globals: a function and its globals would be a reference cycle
