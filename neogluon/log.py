"""mx.log (being written)."""
