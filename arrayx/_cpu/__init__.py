"""The CPU executor (NumPy)."""

from .executor import CPUExecutor
from .workers import set_threads, threads

__all__ = ["CPUExecutor", "set_threads", "threads"]
