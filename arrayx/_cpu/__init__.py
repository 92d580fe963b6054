"""The CPU executor (NumPy)."""

from .executor import CPUExecutor

__all__ = ["CPUExecutor"]
