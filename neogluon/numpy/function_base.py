"""``mx.np.function_base`` (MXNet's home of ``meshgrid``)."""
from ._op import meshgrid  # noqa: F401

__all__ = ["meshgrid"]
