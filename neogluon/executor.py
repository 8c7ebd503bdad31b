"""``mx.executor``: a Symbol bound to arrays (:class:`Executor`, made by ``Symbol.bind`` and
``Symbol.simple_bind``). The implementation lives beside hybridize's captured-graph machinery,
in :mod:`neogluon.gluon._executor`."""
from .gluon._executor import Executor

__all__ = ["Executor"]


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from . import ndarray  # noqa: E402,F401
from .base import py_str  # noqa: E402,F401
from .ndarray import NDArray  # noqa: E402,F401
