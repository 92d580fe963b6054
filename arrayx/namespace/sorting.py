"""Sorting functions of the array API standard."""

__all__ = []
