"""``mx.engine``: MXNet's operator bulking controls, kept for the code that calls them.

MXNet's engine can bundle up to ``size`` consecutive operators into one scheduled unit
(``mx.engine.bulk(size)``, ``mx.engine.set_bulk_size(size)``) to cut its per-operator
scheduling cost. neogluon has no such engine: each ``mx.nd`` operator is a PyTorch eager call,
dispatched one by one, and what fuses operators here is ``HybridBlock.hybridize()`` (a traced,
optionally compiled graph). So these functions record the size, per thread as MXNet does,
and return the previous one, and change nothing else: results are the same with or without
them, and code written for MXNet (``with mx.engine.bulk(10): ...``) runs unchanged.
"""
from __future__ import annotations

import numbers
import threading

from .base import MXNetError, MXNetValueError

__all__ = ["set_bulk_size", "bulk"]

# MXNet passes the size as a C int.
_INT_MAX = 2 ** 31 - 1


class _BulkSizeTypeError(MXNetError, TypeError):
    """A bulk size that is not an integer (MXNet raises TypeError there)."""


class _BulkState(threading.local):
    size = 0    # MXNet's engine starts every thread at 0 (no bulking)


_state = _BulkState()


def _checked_size(size):
    if not isinstance(size, numbers.Integral):
        raise _BulkSizeTypeError(f"bulk size must be an integer, got "
                                 f"{type(size).__name__} {size!r}")
    if size < 0 or size > _INT_MAX:
        raise MXNetValueError(f"bulk size must be between 0 and {_INT_MAX}, got {size}")
    return int(size)


def set_bulk_size(size):
    """Set this thread's bulk size (the most operators MXNet would bundle together).

    In neogluon the size is recorded and has no other effect (see the module's note).

    Parameters
    ----------
    size : int
        Bulk size, 0 or more (0 or 1: no bulking).

    Returns
    -------
    int
        The previous size of this thread.
    """
    size = _checked_size(size)
    previous, _state.size = _state.size, size
    return previous


class _BulkScope:
    """Context manager of :func:`bulk`: sets the size on entry and restores the previous one
    on exit (exceptions included)."""

    def __init__(self, size):
        self._size = _checked_size(size)
        self._old_size = None

    def __enter__(self):
        self._old_size = set_bulk_size(self._size)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        set_bulk_size(self._old_size)


def bulk(size):
    """Scope with a bulk size of ``size``, restored to the previous size when it ends::

        with mx.engine.bulk(10):
            x = mx.nd.zeros((1,))
            for _ in range(100):
                x += 1

    In neogluon the operators still run one by one, with the same results (see the
    module's note); nested scopes restore their sizes in order.

    Parameters
    ----------
    size : int
        Bulk size, 0 or more.

    Returns
    -------
    context manager
    """
    return _BulkScope(size)
