"""``nd.contrib``: operators MXNet keeps under contrib."""
from .ops import isnan, isinf, isfinite  # noqa: F401

__all__ = ["isnan", "isinf", "isfinite"]
