"""``mx.attribute``: attributes given to every symbol created inside a ``with`` block.

``with mx.AttrScope(ctx_group='dev1', __mood__='calm'):`` makes every variable and operator
node created in the block carry those attributes, as MXNet 1.x does: the scope's attributes
come first and the ``attr=`` a call passes wins over them; nested scopes merge, the inner
one winning. The symbol layer reads the scope in effect with :meth:`AttrScope.get`.
"""
from __future__ import annotations

import threading
import warnings
from collections import defaultdict

__all__ = ["AttrScope"]


class _ScopeMeta(type):
    """Gives ``AttrScope`` its class-level ``current`` property (MXNet's deprecated way to
    read or replace the scope in effect)."""

    @property
    def current(cls):
        warnings.warn("AttrScope.current has been deprecated. It is advised to use the `with` "
                      "statement with AttrScope.", DeprecationWarning, stacklevel=2)
        return cls._active()

    @current.setter
    def current(cls, scope):
        warnings.warn("AttrScope.current has been deprecated. It is advised to use the `with` "
                      "statement with AttrScope.", DeprecationWarning, stacklevel=2)
        if not isinstance(scope, AttrScope):
            raise TypeError(f"AttrScope.current must be set to an AttrScope, got "
                            f"{type(scope).__name__}")
        cls._current.value = scope


class AttrScope(metaclass=_ScopeMeta):
    """Attributes attached to every symbol created while this scope is entered.

    Parameters
    ----------
    **kwargs : str
        The attributes, by name. Keys MXNet keeps hidden (``ctx_group``, ``lr_mult``,
        ``wd_mult``, ``force_mirroring``, ``mirror_stage``, ``profiler_scope``) are stored as
        ``__key__`` and listed under both names; keys written ``__key__`` are user attributes.
        On an operator, any other key is taken as an operator argument, as in MXNet.

    Examples
    --------
    >>> with mx.AttrScope(ctx_group='stage1'):
    ...     fc = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=4, name='fc')
    >>> fc.attr('ctx_group')
    'stage1'
    """
    _current = threading.local()
    # How many control-flow subgraphs were given each name (MXNet's contrib foreach/cond
    # number them through this table).
    _subgraph_names = defaultdict(int)

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise ValueError(f"Attributes need to be string: AttrScope got {key}={value!r} "
                                 f"({type(value).__name__})")
        self._attr = kwargs
        self._old_scope = None

    def get(self, attr):
        """The attributes a new symbol gets: this scope's, updated with ``attr``.

        Parameters
        ----------
        attr : dict of str to str or None
            The attributes the creating call passed (they win over the scope's).

        Returns
        -------
        dict of str to str
            A new dict when the scope has attributes; otherwise ``attr`` itself, or ``{}``.
        """
        if not self._attr:
            return attr if attr else {}
        merged = dict(self._attr)
        if attr:
            merged.update(attr)
        return merged

    def __enter__(self):
        outer = AttrScope._active()
        self._old_scope = outer
        # An inner scope holds the outer scope's attributes too, its own winning.
        merged = dict(outer._attr)
        merged.update(self._attr)
        self._attr = merged
        AttrScope._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        if self._old_scope is None:
            raise RuntimeError("AttrScope.__exit__ without a matching __enter__")
        AttrScope._current.value = self._old_scope

    @classmethod
    def _active(cls):
        """The scope in effect in this thread (an empty one outside any ``with``); no
        deprecation warning, for the symbol layer."""
        scope = getattr(AttrScope._current, "value", None)
        if scope is None:
            scope = AttrScope._current.value = AttrScope()
        return scope

    def __repr__(self):
        return f"AttrScope({', '.join(f'{k}={v!r}' for k, v in self._attr.items())})"


def _current_attrs(attr):
    """The attributes of a symbol created now with ``attr`` (the current scope's merged with
    ``attr``); a new dict."""
    return dict(AttrScope._active().get(attr))


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from .base import classproperty, string_types, with_metaclass  # noqa: E402,F401
