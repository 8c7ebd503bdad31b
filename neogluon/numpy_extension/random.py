"""``mx.npx.random``: MXNet's extra samplers for mx.np arrays."""
import torch

from ..random import generator
from ..numpy.multiarray import _wrap, _ctx_arg, _torch_dtype
from ..numpy import random as _npr


def seed(seed, ctx="all"):  # noqa: A002 - MXNet's name
    """Seed neogluon's generators (``mx.random.seed``)."""
    from .. import random as _random
    _random.seed(seed, ctx)


def bernoulli(prob=None, logit=None, size=None, dtype=None, ctx=None, out=None):
    """Draws of 0/1 with probability ``prob`` (or ``sigmoid(logit)``)."""
    if (prob is None) == (logit is None):
        raise ValueError("bernoulli: give exactly one of prob and logit")
    if prob is not None:
        pv = prob._t.detach() if hasattr(prob, "_t") else torch.as_tensor(prob)
        if bool(((pv < 0) | (pv > 1)).any()):
            raise ValueError("bernoulli: prob must be in [0, 1]")
    p = prob if prob is not None else logit
    c = getattr(p, "_ctx", None) or _ctx_arg(ctx)
    t = p._t.detach() if hasattr(p, "_t") else torch.as_tensor(p, dtype=torch.float32,
                                                                device=c.torch_device)
    if logit is not None:
        t = torch.sigmoid(t)
    shape = tuple(t.shape) if size is None else ((size,) if isinstance(size, int) else
                                                 tuple(size))
    u = torch.rand(shape, generator=generator(c.torch_device), device=c.torch_device)
    r = _wrap((u < t.expand(shape)).to(_torch_dtype(dtype)), c)
    if out is not None:
        out[...] = r
        return out
    return r


def uniform_n(low=0.0, high=1.0, batch_shape=None, dtype=None, ctx=None):
    """``batch_shape`` draws for each (broadcast) parameter: shape batch_shape + param."""
    shape = tuple(torch.broadcast_shapes(tuple(getattr(low, "shape", ())),
                                         tuple(getattr(high, "shape", ()))))
    bs = () if batch_shape is None else ((batch_shape,) if isinstance(batch_shape, int) else
                                         tuple(batch_shape))
    return _npr.uniform(low, high, size=bs + shape, dtype=dtype, ctx=ctx)


def normal_n(loc=0.0, scale=1.0, batch_shape=None, dtype=None, ctx=None):
    shape = tuple(torch.broadcast_shapes(tuple(getattr(loc, "shape", ())),
                                         tuple(getattr(scale, "shape", ()))))
    bs = () if batch_shape is None else ((batch_shape,) if isinstance(batch_shape, int) else
                                         tuple(batch_shape))
    return _npr.normal(loc, scale, size=bs + shape, dtype=dtype, ctx=ctx)
