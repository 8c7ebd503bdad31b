"""Deferred operator errors, as MXNet's asynchronous engine reports them.

In MXNet an operator whose *values* are invalid (a sampler with a negative scale) fails inside
its kernel, on the engine's worker thread; the error surfaces at the next synchronisation
point that depends on the result (``asnumpy``, ``asscalar``, ``wait_to_read``, ``waitall``),
once, and results computed from the failed array fail the same way. Programs rely on that
(an unused bad sample raises nothing), so neogluon reproduces it for such checks; errors
about shapes, dtypes and arguments stay immediate, as they are in MXNet.

A failed result is a :class:`FailedTensor` (NaN-filled data of the right shape and dtype)
carrying a shared :class:`Failure`. Its ``__torch_function__`` hands the failure on to every
tensor computed from it, so any operator propagates it without knowing about it.
"""
from __future__ import annotations

import weakref

import torch

__all__ = ["Failure", "FailedTensor", "failed", "check", "raise_pending"]

# Failures some live tensor still carries (weakly held: once every tensor computed from a
# failed operator is gone, nothing can observe its error any more).
_PENDING = weakref.WeakSet()


class Failure:
    """The error of one failed operator, raised once at the first synchronisation."""

    __slots__ = ("error", "__weakref__")

    def __init__(self, error):
        self.error = error
        _PENDING.add(self)

    def take(self):
        err, self.error = self.error, None
        return err


def _holder(obj):
    if isinstance(obj, FailedTensor):
        f = getattr(obj, "_failure", None)
        return f if f is not None and f.error is not None else None
    if isinstance(obj, (list, tuple)):
        for o in obj:
            f = _holder(o)
            if f is not None:
                return f
    elif isinstance(obj, dict):
        return _holder(list(obj.values()))
    return None


def _mark(obj, failure):
    if isinstance(obj, torch.Tensor):
        r = obj if isinstance(obj, FailedTensor) else obj.as_subclass(FailedTensor)
        r._failure = failure
        return r
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(_mark(o, failure) for o in obj)
    if isinstance(obj, list):
        return [_mark(o, failure) for o in obj]
    return obj


class FailedTensor(torch.Tensor):
    """A tensor whose producing operator failed; see the module docstring."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        failure = _holder(args) or _holder(kwargs)
        with torch._C.DisableTorchFunctionSubclass():
            ret = func(*args, **kwargs)
        if failure is None:
            return ret
        return _mark(ret, failure)


def failed(error, shape, dtype, device):
    """A NaN-filled (or zero, for integer dtypes) tensor that raises ``error`` at the first
    synchronisation of anything computed from it."""
    t = torch.empty(shape, dtype=dtype, device=device)
    t.fill_(float("nan") if t.is_floating_point() else 0)
    return _mark(t, Failure(error))


def check(t):
    """Raise the pending error of tensor ``t``, if it has one (once)."""
    if isinstance(t, FailedTensor):
        f = getattr(t, "_failure", None)
        if f is not None and f.error is not None:
            raise f.take()


def raise_pending():
    """``waitall``: raise one pending error, if any, and clear them all (as MXNet does)."""
    first = None
    for f in list(_PENDING):
        err = f.take()
        if first is None and err is not None:
            first = err
    if first is not None:
        raise first

