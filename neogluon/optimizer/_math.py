"""Multi-tensor building blocks shared by the built-in optimizers (torch tensor lists)."""
from __future__ import annotations

import numpy as np
import torch

_mul = torch._foreach_mul
_mul_ = torch._foreach_mul_
_add = torch._foreach_add
_add_ = torch._foreach_add_


def np_type(t):
    """The NumPy scalar type a compiled kernel computes in for tensor ``t`` (float64 for
    float64 tensors, float32 otherwise): device paths round their scalars the same way."""
    return np.float64 if t.dtype is torch.float64 else np.float32


def scaled_grads(gs, rescale, clip):
    """New tensors ``clip(rescale * g)``; the gradients themselves are left unchanged."""
    g = _mul(gs, rescale)
    if clip is not None:
        torch._foreach_clamp_min_(g, -clip)
        torch._foreach_clamp_max_(g, clip)
    return g


def scaled_grads_wd(gs, ws, rescale, wd, clip):
    """New tensors ``clip(rescale * g + wd * w)`` (MXNet's Adam-family gradient)."""
    g = _mul(gs, rescale)
    if wd:
        _add_(g, ws, alpha=wd)
    if clip is not None:
        torch._foreach_clamp_min_(g, -clip)
        torch._foreach_clamp_max_(g, clip)
    return g


def pick(seq, pos):
    return [seq[p] for p in pos]


def sgd_mom(ws, g, moms, lr, wd, momentum):
    """mom = momentum*mom - lr*wd*w - lr*g; w += mom (g already rescaled and clipped)."""
    _mul_(moms, momentum)
    if wd:
        _add_(moms, ws, alpha=-lr * wd)
    _add_(moms, g, alpha=-lr)
    _add_(ws, moms)


def sgd_plain(ws, g, lr, wd):
    """w = (1 - lr*wd)*w - lr*g."""
    if wd:
        _mul_(ws, 1.0 - lr * wd)
    _add_(ws, g, alpha=-lr)


def sgd_mom_lists(ws, g, moms, lrs, wds, momentum, rescale=None):
    """:func:`sgd_mom` with a learning rate and weight decay per tensor, in the compiled
    kernel's (and MXNet's multi_sgd_mom_update's) scalars: ``lr*wd`` and, for raw gradients
    (``rescale`` given: no clipping), ``lr*rescale`` are products in the tensors' precision."""
    T = np_type(ws[0])
    _mul_(moms, momentum)
    lw = [-float(T(lr) * T(wd)) for lr, wd in zip(lrs, wds)]
    if any(lw):
        _add_(moms, _mul(ws, lw))
    if rescale is None:
        step = _mul(g, [float(T(lr)) for lr in lrs])
    else:
        step = _mul(g, [float(T(lr) * T(rescale)) for lr in lrs])
    torch._foreach_sub_(moms, step)
    _add_(ws, moms)


def sgd_plain_lists(ws, g, lrs, wds):
    """:func:`sgd_plain` with a learning rate and weight decay per tensor."""
    f = [1.0 - lr * wd for lr, wd in zip(lrs, wds)]
    if any(x != 1.0 for x in f):
        _mul_(ws, f)
    _mul_(g, [-lr for lr in lrs])
    _add_(ws, g)
