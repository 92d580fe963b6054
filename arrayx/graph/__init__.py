"""The graph layer: nodes, the primitive table, and traversals."""
