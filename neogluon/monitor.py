"""mx.monitor (being written)."""
