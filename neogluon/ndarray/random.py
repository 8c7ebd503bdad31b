"""``nd.random``: samplers drawing from neogluon's seeded per-device generators."""
from __future__ import annotations

import numpy as np
import torch

from ..base import MXNetError, to_torch_dtype
from ..context import current_context
from ..random import generator
from .ndarray import NDArray, _new, _new_on

__all__ = ["uniform", "normal", "randn", "randint", "shuffle", "exponential", "gamma",
           "poisson", "multinomial", "negative_binomial", "generalized_negative_binomial"]


def _shape(shape):
    if shape is None or shape == ():
        return (1,)
    return (shape,) if isinstance(shape, int) else tuple(shape)


def _out(t, ctx, out):
    if out is not None:
        out[:] = _new(t, ctx)
        return out
    return _new_on(t, ctx)


def _param(p, shape):
    return p._t if isinstance(p, NDArray) else p


def uniform(low=0.0, high=1.0, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from U[low, high)."""
    ctx = ctx or (out.context if out is not None else current_context())
    dev = ctx.torch_device
    shape = out.shape if out is not None and shape is None else _shape(shape)
    dt = to_torch_dtype(dtype if dtype is not None else (out.dtype if out is not None else None))
    if isinstance(low, NDArray) or isinstance(high, NDArray):
        lo, hi = _param(low, shape), _param(high, shape)
        base = torch.rand(tuple(getattr(lo, "shape", ())) + tuple(shape if shape != (1,) else ()),
                          generator=generator(dev), device=dev, dtype=dt)
        lo = lo.reshape(lo.shape + (1,) * (base.dim() - lo.dim())) if torch.is_tensor(lo) else lo
        hi = hi.reshape(hi.shape + (1,) * (base.dim() - hi.dim())) if torch.is_tensor(hi) else hi
        return _out(base * (hi - lo) + lo, ctx, out)
    t = torch.empty(shape, dtype=dt, device=dev).uniform_(low, high, generator=generator(dev))
    return _out(t, ctx, out)


def normal(loc=0.0, scale=1.0, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from N(loc, scale**2)."""
    ctx = ctx or (out.context if out is not None else current_context())
    dev = ctx.torch_device
    shape = out.shape if out is not None and shape is None else _shape(shape)
    dt = to_torch_dtype(dtype if dtype is not None else (out.dtype if out is not None else None))
    if isinstance(loc, NDArray) or isinstance(scale, NDArray):
        lo, sc = _param(loc, shape), _param(scale, shape)
        ref = lo if torch.is_tensor(lo) else sc
        extra = tuple(shape if shape != (1,) else ())
        base = torch.randn(tuple(ref.shape) + extra, generator=generator(dev), device=dev, dtype=dt)
        lo = lo.reshape(lo.shape + (1,) * len(extra)) if torch.is_tensor(lo) else lo
        sc = sc.reshape(sc.shape + (1,) * len(extra)) if torch.is_tensor(sc) else sc
        return _out(base * sc + lo, ctx, out)
    t = torch.empty(shape, dtype=dt, device=dev).normal_(loc, scale, generator=generator(dev))
    return _out(t, ctx, out)


def randn(*shape, loc=0.0, scale=1.0, dtype=None, ctx=None, **kwargs):
    """Samples from N(loc, scale**2) with the shape given as positional arguments."""
    return normal(loc, scale, shape=shape or None, dtype=dtype, ctx=ctx)


def randint(low, high, shape=None, dtype="int32", ctx=None, out=None, **kwargs):
    """Integers drawn uniformly from [low, high)."""
    if dtype not in ("int32", "int64", None) and np.dtype(dtype) not in (np.int32, np.int64):
        raise MXNetError(f"randint: dtype must be 'int32' or 'int64', got {dtype!r}")
    ctx = ctx or current_context()
    dev = ctx.torch_device
    t = torch.randint(int(low), int(high), _shape(shape), generator=generator(dev), device=dev,
                      dtype=to_torch_dtype(dtype or "int32"))
    return _out(t, ctx, out)


def exponential(scale=1.0, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the exponential distribution with mean ``scale``."""
    ctx = ctx or current_context()
    dev = ctx.torch_device
    t = torch.empty(_shape(shape), dtype=to_torch_dtype(dtype), device=dev)
    t.exponential_(1.0 / scale, generator=generator(dev))
    return _out(t, ctx, out)


def gamma(alpha=1.0, beta=1.0, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the gamma distribution with shape ``alpha`` and scale ``beta``."""
    ctx = ctx or current_context()
    dev = ctx.torch_device
    conc = torch.full(_shape(shape), float(alpha), dtype=to_torch_dtype(dtype), device=dev)
    t = torch._standard_gamma(conc, generator=generator(dev)) * beta
    return _out(t, ctx, out)


def poisson(lam=1.0, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the Poisson distribution with rate ``lam``."""
    ctx = ctx or current_context()
    dev = ctx.torch_device
    rates = torch.full(_shape(shape), float(lam), dtype=to_torch_dtype(dtype), device=dev)
    return _out(torch.poisson(rates, generator=generator(dev)), ctx, out)


def negative_binomial(k=1, p=1.0, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Failures before the ``k``-th success with success probability ``p``."""
    ctx = ctx or current_context()
    dev = ctx.torch_device
    gen = generator(dev)
    conc = torch.full(_shape(shape), float(k), dtype=torch.float64, device=dev)
    lam = torch._standard_gamma(conc, generator=gen) * ((1.0 - p) / p)
    t = torch.poisson(lam, generator=gen).to(to_torch_dtype(dtype))
    return _out(t, ctx, out)


def generalized_negative_binomial(mu=1.0, alpha=1.0, shape=None, dtype=None, ctx=None,
                                  out=None, **kwargs):
    """Negative binomial with mean ``mu`` and dispersion ``alpha``."""
    ctx = ctx or current_context()
    dev = ctx.torch_device
    gen = generator(dev)
    if alpha == 0:
        lam = torch.full(_shape(shape), float(mu), dtype=torch.float64, device=dev)
    else:
        conc = torch.full(_shape(shape), 1.0 / alpha, dtype=torch.float64, device=dev)
        lam = torch._standard_gamma(conc, generator=gen) * (alpha * mu)
    t = torch.poisson(lam, generator=gen).to(to_torch_dtype(dtype))
    return _out(t, ctx, out)


def multinomial(data, shape=None, get_prob=False, dtype="int32", **kwargs):
    """Draw category indices from each row of probabilities ``data``."""
    p = data._t
    n = 1 if shape is None else (shape if isinstance(shape, int) else int(torch.tensor(shape).prod()))
    flat = p.reshape(-1, p.shape[-1])
    idx = torch.multinomial(flat, n, replacement=True, generator=generator(p.device))
    out_shape = tuple(p.shape[:-1]) + (() if shape is None else _shape(shape))
    idx = idx.reshape(out_shape if out_shape else (1,))
    res = _new(idx.to(to_torch_dtype(dtype)), data._ctx)
    if get_prob:
        lp = torch.log(torch.gather(flat, 1, idx.reshape(flat.shape[0], -1))).reshape(idx.shape)
        return [res, _new(lp, data._ctx)]
    return res


def shuffle(data, **kwargs):
    """A copy of ``data`` with its first axis randomly permuted."""
    t = data._t
    perm = torch.randperm(t.shape[0], generator=generator(t.device), device=t.device)
    return _new(t.detach()[perm], data._ctx)
