"""Native CPU kernels: each fused group as one compiled C++ loop.

The CPU executor runs a fused group on NumPy (fused.py: a NumPy call per
instruction, over cache-sized blocks) or through a kernel generated from the
group (codegen.py), compiled at run time by the system's C++ compiler
(compiler.py) and called over the group's buffers (runner.py, launch.py):
one pass over memory, values in registers, vectorized, on the executor's
threads.

`mode` picks the path, from ARRAYX_CPU_KERNELS or `set_mode`:

- "auto" (the default): a group runs on NumPy until its kernel is compiled
  in the background, then natively; a second process finds the kernel in
  the disk cache at once.
- "native": a group's kernel is compiled at its first call, on the calling
  thread, and a compile failure raises; lone elementwise steps and
  reductions run natively too (tests, debugging, benchmarks).
- "numpy": never native.

Groups no loop form covers (an arg reduction, a primitive without a C
expression such as complex `exp`) run on NumPy in every mode.
"""

import os

MODES = ("auto", "native", "numpy")


def _mode_from_environment():
    value = os.environ.get("ARRAYX_CPU_KERNELS", "auto")
    if value not in MODES:
        raise ValueError(f"ARRAYX_CPU_KERNELS={value!r}: expected one of {', '.join(MODES)}")
    return value


mode = _mode_from_environment()


def set_mode(value):
    """Run fused groups on the path `value` names (see the module) from the next call on."""
    global mode
    if value not in MODES:
        raise ValueError(f"set_mode: expected one of {', '.join(repr(m) for m in MODES)}, got {value!r}")
    mode = value
