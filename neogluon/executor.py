"""``mx.executor``: a Symbol bound to arrays (:class:`Executor`, made by ``Symbol.bind`` and
``Symbol.simple_bind``). The implementation lives beside hybridize's captured-graph machinery,
in :mod:`neogluon.gluon._executor`."""
from .gluon._executor import Executor

__all__ = ["Executor"]
