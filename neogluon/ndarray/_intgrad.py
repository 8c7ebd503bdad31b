"""Gradients of integer arrays, which MXNet has and torch's autograd does not.

MXNet differentiates an integer variable like any other (the gradient of ``x[idx]`` or of
``topk(x, ret_typ='value')`` scatters the head gradient into an integer buffer). torch only
differentiates floating-point tensors, so an integer variable's tensor is an
:class:`IntVarTensor`: the integer data, plus a float64 *carrier* leaf holding the same values
with ``requires_grad``. While recording, every torch function that takes such a tensor runs
twice: on the integers (the result the program sees) and on the carriers (a float64 twin
that is in the graph). Results keep their twin as their own carrier, so ``backward`` from an
integer head starts at its carrier and the variable's gradient is the carrier leaf's, cast to
the variable's dtype. Outside recording nothing extra runs.
"""
from __future__ import annotations

import torch

from .. import autograd as _ag_mod

__all__ = ["IntVarTensor", "make_variable", "carrier", "cast_with_grad"]

_state = _ag_mod._state


def _swap(obj):
    if isinstance(obj, IntVarTensor):
        c = getattr(obj, "_carrier", None)
        return obj if c is None else c
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(_swap(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _swap(v) for k, v in obj.items()}
    return obj


def _has_carrier(obj):
    if isinstance(obj, IntVarTensor):
        return getattr(obj, "_carrier", None) is not None
    if isinstance(obj, (list, tuple)):
        return any(_has_carrier(o) for o in obj)
    if isinstance(obj, dict):
        return any(_has_carrier(o) for o in obj.values())
    return False


def _pair(ret, twin):
    if isinstance(ret, torch.Tensor) and isinstance(twin, torch.Tensor):
        if not twin.requires_grad or tuple(twin.shape) != tuple(ret.shape):
            return ret
        if ret.is_floating_point() or ret.is_complex():
            return twin.to(ret.dtype)  # (an integer variable cast to float: a normal tensor)
        r = ret.as_subclass(IntVarTensor)
        r._carrier = twin
        return r
    if isinstance(ret, (list, tuple)) and isinstance(twin, (list, tuple)) and \
            len(ret) == len(twin) and not hasattr(ret, "_fields"):
        return type(ret)(_pair(a, b) for a, b in zip(ret, twin))
    return ret


class IntVarTensor(torch.Tensor):
    """An integer tensor that is (or was computed from) an integer autograd variable."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        with torch._C.DisableTorchFunctionSubclass():
            ret = func(*args, **kwargs)
        if not (_state.recording and torch.is_grad_enabled()) or \
                not (_has_carrier(args) or _has_carrier(kwargs)):
            return ret
        if func in _CASTS and isinstance(ret, torch.Tensor) and args and \
                not (ret.is_floating_point() or ret.is_complex()):
            # a cast to another integer type: the twin stays the (float) carrier, as the
            # gradient of a cast is the head gradient itself
            c = carrier(args[0])
            if c is not None:
                with torch._C.DisableTorchFunctionSubclass():
                    return _pair(ret, c.to(device=ret.device))
        try:
            with torch._C.DisableTorchFunctionSubclass():
                twin = func(*_swap(args), **_swap(kwargs))
        except (RuntimeError, TypeError, ValueError, IndexError):
            return ret  # (an op with no float twin, such as bitwise ones: no gradient)
        return _pair(ret, twin)


_CASTS = frozenset((torch.Tensor.to, torch.Tensor.type, torch.Tensor.int, torch.Tensor.long,
                    torch.Tensor.short, torch.Tensor.char, torch.Tensor.byte))


def make_variable(t):
    """``t`` (integer) as a variable: an IntVarTensor with a fresh float64 carrier leaf."""
    r = t.detach().as_subclass(IntVarTensor)
    r._carrier = t.detach().to(torch.float64).requires_grad_(True)
    return r


def carrier(t):
    """The float64 twin of an IntVarTensor in the graph (None for other tensors)."""
    if isinstance(t, IntVarTensor):
        return getattr(t, "_carrier", None)
    return None


def cast_with_grad(src, ret):
    """``ret``, the integer cast of ``src``, kept in the graph as MXNet's ``Cast`` is (its
    gradient is the head gradient cast back): while recording, when ``src`` is a float
    tensor that takes a gradient or an integer variable's tensor, ``ret`` gets a float64
    carrier with ``ret``'s values whose gradient passes straight to ``src``."""
    if not (_state.recording and torch.is_grad_enabled()) or ret.is_floating_point():
        return ret
    base = carrier(src) if isinstance(src, IntVarTensor) else src
    if base is None or not base.requires_grad or not (base.is_floating_point()):
        return ret
    with torch._C.DisableTorchFunctionSubclass():
        b = base.to(torch.float64)
        twin = b + (ret.detach().to(torch.float64) - b).detach()
        plain = ret.detach()
    r = plain.as_subclass(IntVarTensor)
    r._carrier = twin
    return r
