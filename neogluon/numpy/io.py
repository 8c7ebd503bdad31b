"""``mx.np.io``: ``genfromtxt``, which MXNet runs on official NumPy (the result comes back as
an mx.np array)."""
from ._fallback import make as _make

__all__ = ["genfromtxt"]

genfromtxt = _make("genfromtxt")
