"""mx.engine (being written)."""
