"""mx.visualization (being written)."""
