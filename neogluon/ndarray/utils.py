"""``mxnet.ndarray.utils``: MXNet's module of the array constructors and file functions that
know sparse storage (``zeros``, ``empty``, ``array``, ``load``, ``save``...); the same
functions as ``mx.nd``'s."""
from . import zeros, empty, array, load, save, load_frombuffer  # noqa: F401

__all__ = ["zeros", "empty", "array", "load", "load_frombuffer", "save"]
