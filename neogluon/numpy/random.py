"""``mx.np.random``: NumPy's samplers on neogluon's seeded generators (``mx.random.seed``).

``size`` is NumPy's shape argument; parameters may be numbers or arrays (broadcast against
``size``); results are float32 unless ``dtype`` says otherwise, on ``ctx`` (or the current
context). Draws from array parameters are differentiable where the distribution is
reparameterisable (``normal``, ``uniform``, ``exponential``...), as MXNet's samplers are.
"""
import numbers

import numpy as _onp
import torch

from ..base import MXNetError
from ..context import current_context
from ..ndarray.ndarray import NDArray, _run
from ..random import generator
from .multiarray import _wrap, _torch_dtype, _ctx_arg, ndarray

__all__ = ["uniform", "normal", "randn", "rand", "randint", "choice", "shuffle", "gamma",
           "beta", "exponential", "multinomial", "lognormal", "logistic", "gumbel", "weibull",
           "pareto", "power", "rayleigh", "chisquare", "multivariate_normal", "laplace",
           "seed"]


def seed(seed=None, ctx="all"):  # noqa: A001
    """Seed the generators (as ``mx.random.seed``)."""
    from .. import random as _r
    _r.seed(seed if seed is not None else _onp.random.randint(0, 2 ** 31), ctx)


def _param(p, dt, dev):
    if isinstance(p, NDArray):
        return p._t.to(dt) if p._t.dtype is not dt else p._t
    return torch.as_tensor(p, dtype=dt, device=dev)


def _params_ctx(params, ctx, device):
    """The Context of the first array parameter, else ``ctx``/``device`` (or the current)."""
    for p in params:
        if isinstance(p, NDArray):
            return p._ctx
    return _ctx_arg(ctx, device)


def _size(size):
    return () if size is None else ((size,) if isinstance(size, numbers.Integral)
                                    else tuple(size))


def _setup(size, ctx, dtype, *params, device=None):
    c = _params_ctx(params, ctx, device)
    dt = _torch_dtype(dtype)
    ts = [_param(p, dt if dt.is_floating_point else torch.float32, c.torch_device)
          for p in params]
    if size is None:
        shape = torch.broadcast_shapes(*[t.shape for t in ts]) if ts else ()
    else:
        shape = (size,) if isinstance(size, numbers.Integral) else tuple(size)
    return c, dt, ts, tuple(shape), generator(c.torch_device)


def _done(t, c, dt, out):
    r = _wrap(t if t.dtype is dt else t.to(dt), c)
    if out is not None:
        out[...] = r
        return out
    return r


def uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None, out=None, device=None):
    c, dt, (lo, hi), shape, gen = _setup(size, ctx, dtype, low, high, device=device)
    u = torch.rand(shape, generator=gen, dtype=lo.dtype, device=c.torch_device)
    return _done(_run(lambda a, b: a + (b - a) * u, lo, hi), c, dt, out)


def normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, out=None, device=None):
    c, dt, (mu, sd), shape, gen = _setup(size, ctx, dtype, loc, scale, device=device)
    z = torch.randn(shape, generator=gen, dtype=mu.dtype, device=c.torch_device)
    return _done(_run(lambda m, s: m + s * z, mu, sd), c, dt, out)


def lognormal(mean=0.0, sigma=1.0, size=None, dtype=None, ctx=None, out=None, device=None):
    _check_positive("lognormal", "sigma", sigma)
    r = normal(mean, sigma, size=size, dtype=dtype, ctx=ctx, device=device)
    r = _wrap(_run(torch.exp, r._t), r._ctx)
    if out is not None:
        out[...] = r
        return out
    return r


def randn(*size, **kwargs):
    return normal(0.0, 1.0, size=size if size else None, **kwargs)


def rand(*size, **kwargs):
    return uniform(0.0, 1.0, size=size if size else None, **kwargs)


def randint(low, high=None, size=None, dtype=None, ctx=None, out=None, device=None):
    if high is None:
        low, high = 0, low
    if high <= low:
        raise ValueError(f"randint: low >= high ({low} >= {high})")
    c = _ctx_arg(ctx, device)
    dt = _torch_dtype(dtype, torch.int64)
    shape = () if size is None else ((size,) if isinstance(size, numbers.Integral)
                                     else tuple(size))
    t = torch.randint(int(low), int(high), shape, generator=generator(c.torch_device),
                      device=c.torch_device, dtype=torch.int64)
    return _done(t, c, dt, out)


def exponential(scale=1.0, size=None, ctx=None, out=None, device=None, dtype=None):
    _check_positive("exponential", "scale", scale)
    c, dt, (s,), shape, gen = _setup(size, ctx, dtype, scale, device=device)
    e = torch.empty(shape, dtype=s.dtype, device=c.torch_device).exponential_(1.0,
                                                                             generator=gen)
    return _done(_run(lambda v: v * e, s), c, dt, out)


def gamma(shape=1.0, scale=1.0, size=None, dtype=None, ctx=None, out=None, device=None):
    _check_positive("gamma", "shape", shape, strict=True)
    _check_positive("gamma", "scale", scale, strict=True)
    c, dt, (k, th), shp, gen = _setup(size, ctx, dtype, shape, scale, device=device)
    kk = k.expand(shp).contiguous()
    if kk.dtype in (torch.float16, torch.bfloat16):
        kk, th = kk.float(), th.float()   # (torch samples gamma in 32/64-bit only)
    g = torch._standard_gamma(kk, generator=gen)
    return _done(_run(lambda a, b: a * b, g, th), c, dt, out)


def beta(a, b, size=None, dtype=None, ctx=None, device=None):
    x = gamma(a, 1.0, size=size, dtype="float64", ctx=ctx, device=device)
    y = gamma(b, 1.0, size=size, dtype="float64", ctx=ctx, device=device)
    return (x / (x + y)).astype(dtype or "float32")


def chisquare(df, size=None, dtype=None, ctx=None, device=None):
    return gamma(_onp.asarray(df) / 2.0 if not isinstance(df, NDArray) else df / 2.0, 2.0,
                 size=size, dtype=dtype, ctx=ctx, device=device)


def _check_positive(name, what, value, strict=False):
    """MXNet's samplers refuse negative (or, ``strict``, non-positive) parameters with
    ValueError."""
    if value is None:
        return
    if isinstance(value, NDArray):
        t = value._t.detach()
        bad = bool((t <= 0).any()) if strict else bool((t < 0).any())
    else:
        v = _onp.asarray(value)
        bad = bool((v <= 0).any()) if strict else bool((v < 0).any())
    if bad:
        raise ValueError(f"np.random.{name}: {what} must be {'positive' if strict else 'non-negative'}")


def _inverse_cdf(name, fn, params, size, ctx, out, device, dtype):
    """A draw ``fn(u, *params)`` from uniform ``u`` in (0, 1): differentiable in the array
    parameters (reparameterised), float32 unless ``dtype``."""
    shapes = [tuple(getattr(p, "shape", ())) for p in params]
    shape = tuple(torch.broadcast_shapes(*shapes)) if size is None else _size(size)
    c = _params_ctx(params, ctx, device)
    u = torch.rand(shape, generator=generator(c.torch_device), dtype=torch.float64,
                   device=c.torch_device).clamp_(1e-12, 1 - 1e-12)
    ts = [_param(p, torch.float64, c.torch_device) for p in params]
    r = _run(lambda *v: fn(u, *v), *ts)
    return _done(r, c, _torch_dtype(dtype), out)


def logistic(loc=0.0, scale=1.0, size=None, ctx=None, out=None, device=None, dtype=None):
    _check_positive("logistic", "scale", scale)
    return _inverse_cdf("logistic", lambda u, m, s: m + s * torch.log(u / (1 - u)),
                        (loc, scale), size, ctx, out, device, dtype)


def gumbel(loc=0.0, scale=1.0, size=None, ctx=None, out=None, device=None, dtype=None):
    _check_positive("gumbel", "scale", scale)
    return _inverse_cdf("gumbel", lambda u, m, s: m - s * torch.log(-torch.log(u)),
                        (loc, scale), size, ctx, out, device, dtype)


def laplace(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, out=None, device=None):
    _check_positive("laplace", "scale", scale)
    return _inverse_cdf("laplace", lambda u, m, s: m - s * torch.sign(u - 0.5) *
                        torch.log(1 - 2 * torch.abs(u - 0.5)), (loc, scale), size, ctx, out,
                        device, dtype)


def weibull(a, size=None, ctx=None, out=None, device=None, dtype=None):
    _check_positive("weibull", "a", a, strict=True)
    return _inverse_cdf("weibull", lambda u, k: (-torch.log(u)) ** (1.0 / k), (a,), size, ctx,
                        out, device, dtype)


def pareto(a, size=None, ctx=None, out=None, device=None, dtype=None):
    _check_positive("pareto", "a", a, strict=True)
    return _inverse_cdf("pareto", lambda u, k: torch.exp(-torch.log(u) / k) - 1, (a,), size,
                        ctx, out, device, dtype)


def power(a, size=None, ctx=None, out=None, device=None, dtype=None):
    _check_positive("power", "a", a, strict=True)
    return _inverse_cdf("power", lambda u, k: u ** (1.0 / k), (a,), size, ctx, out, device,
                        dtype)


def rayleigh(scale=1.0, size=None, ctx=None, out=None, device=None, dtype=None):
    _check_positive("rayleigh", "scale", scale)
    return _inverse_cdf("rayleigh", lambda u, s: s * torch.sqrt(-2 * torch.log(u)), (scale,),
                        size, ctx, out, device, dtype)


def choice(a, size=None, replace=True, p=None, ctx=None, out=None, device=None):
    c = _ctx_arg(ctx, device)
    gen = generator(c.torch_device)
    if isinstance(a, numbers.Integral):
        n, values = int(a), None
    else:
        values = a if isinstance(a, NDArray) else _wrap(torch.as_tensor(_onp.asarray(a)), c)
        n = values.shape[0]
    shape = () if size is None else ((size,) if isinstance(size, numbers.Integral)
                                     else tuple(size))
    k = int(_onp.prod(shape)) if shape else 1
    if not replace and k > n:
        raise ValueError("Cannot take a larger sample than population when 'replace=False'")
    if p is None:
        probs = torch.full((n,), 1.0 / n, device=c.torch_device)
    else:
        probs = _param(p, torch.float64, c.torch_device)
    if k == 0:
        idx = torch.zeros(shape, dtype=torch.int64, device=c.torch_device)
    else:
        idx = torch.multinomial(probs, k, replacement=replace, generator=gen).reshape(shape)
    r = _wrap(idx, c) if values is None else values[_wrap(idx, c)]
    if out is not None:
        out[...] = r
        return out
    return r


def shuffle(x):
    """Shuffle ``x`` in place along its first axis."""
    if not isinstance(x, NDArray):
        raise TypeError("shuffle: x must be an mx.np.ndarray")
    perm = torch.randperm(x.shape[0], generator=generator(x._t.device), device=x._t.device)
    x._t.data.copy_(x._t.detach()[perm])


def multinomial(n, pvals, size=None):
    pv = _onp.asarray(pvals.asnumpy() if isinstance(pvals, NDArray) else pvals,
                      dtype=_onp.float64)
    if pv.ndim != 1:
        raise MXNetError("multinomial: pvals must be a 1-D sequence")
    shape = () if size is None else ((size,) if isinstance(size, numbers.Integral)
                                     else tuple(size))
    k = int(_onp.prod(shape)) if shape else 1
    c = current_context()
    if n < 0:
        raise ValueError(f"multinomial: n must be non-negative, got {n}")
    if n * k == 0 or len(pv) == 0:
        counts = torch.zeros((k, len(pv)), dtype=torch.int64)
    else:
        draws = torch.multinomial(torch.as_tensor(pv), n * k, replacement=True,
                                  generator=generator(torch.device("cpu"))).reshape(k, n)
        counts = torch.nn.functional.one_hot(draws, len(pv)).sum(1)
    return _wrap(counts.reshape(shape + (len(pv),)).to(c.torch_device), c)


def multivariate_normal(mean, cov, size=None, check_valid=None, tol=None):
    """Draws of shape ``size + batch + (k,)``, the batch broadcast from ``mean``'s leading
    axes and ``cov``'s; differentiable in ``mean`` and ``cov`` (Cholesky reparameterisation)."""
    m = mean if isinstance(mean, NDArray) else _wrap(
        torch.as_tensor(_onp.asarray(mean), dtype=torch.float32), current_context())
    mt = m._t
    ct = cov._t if isinstance(cov, NDArray) else torch.as_tensor(_onp.asarray(cov),
                                                                  dtype=mt.dtype)
    k = mt.shape[-1]
    batch = tuple(torch.broadcast_shapes(tuple(mt.shape[:-1]), tuple(ct.shape[:-2])))
    shape = () if size is None else ((size,) if isinstance(size, numbers.Integral)
                                     else tuple(size))
    z = torch.randn(shape + batch + (k,), generator=generator(mt.device), dtype=torch.float64,
                    device=mt.device)

    def draw(mu, cv):
        L = torch.linalg.cholesky(cv.to(torch.float64))
        return (mu.to(torch.float64) + (L @ z.unsqueeze(-1)).squeeze(-1)).to(mu.dtype)
    return _wrap(_run(draw, mt, ct), m._ctx)
