"""mx.executor (being written)."""
