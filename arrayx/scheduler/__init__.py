"""The scheduler: force points, plans, and the plan cache."""
