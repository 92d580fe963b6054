"""The array API standard's linear algebra extension (`xp.linalg`)."""

__all__ = []
