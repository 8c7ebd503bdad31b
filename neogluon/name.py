"""``mx.name``: how symbols get their default names, as in MXNet 1.x.

An operator symbol created without ``name=`` is named by the current :class:`NameManager`
from a hint (the operator's name in lower case) and a per-hint counter: ``fullyconnected0``,
``fullyconnected1``... Inside ``with Prefix('net_'):`` (what ``block.name_scope()`` opens)
names get the prefix, and an explicit ``name='fwd'`` becomes ``net_fwd``.
"""
from __future__ import annotations

import threading

from .base import _ClassPropertyMeta, classproperty

__all__ = ["NameManager", "Prefix"]


class _Current(threading.local):
    def __init__(self):
        self.value = None


class NameManager(metaclass=_ClassPropertyMeta):
    """Gives unique default names to symbols.

    Use as a context manager to make a fresh manager current for the enclosed code.
    ``NameManager.current`` is the manager in effect in this thread; assigning to it (MXNet's
    deprecated way) replaces this thread's manager only.
    """
    _current = _Current()

    def __init__(self):
        self._counter = {}
        self._old_manager = None

    def get(self, name, hint):
        """The name to use: ``name`` when given, else ``hint`` followed by a counter.

        Parameters
        ----------
        name : str or None
        hint : str
        """
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return f"{hint}{n}"

    def __enter__(self):
        self._old_manager = NameManager._current.value
        NameManager._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        NameManager._current.value = self._old_manager

    @classmethod
    def current_manager(cls):
        """The manager in effect in this thread (a default one outside any ``with``)."""
        cur = cls._current.value
        if cur is None:
            cur = cls._current.value = NameManager()
        return cur

    @classproperty
    def current(cls):
        """The manager in effect in this thread (settable: sets this thread's manager)."""
        return NameManager.current_manager()

    @current.setter
    def current(cls, manager):
        NameManager._current.value = manager


class Prefix(NameManager):
    """A name manager that puts ``prefix`` in front of every name it gives.

    Parameters
    ----------
    prefix : str
    """

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from .base import classproperty, with_metaclass  # noqa: E402,F401
