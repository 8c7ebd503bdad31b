"""``mx.np.stride_tricks`` (MXNet's home of ``broadcast_arrays``)."""
from ._op import broadcast_arrays  # noqa: F401

__all__ = ["broadcast_arrays"]
