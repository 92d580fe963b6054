"""The array API namespace, one module per chapter of the standard."""
