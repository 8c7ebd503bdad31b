"""``nd.random``: samplers drawing from neogluon's seeded per-device generators.

Every sampler takes its distribution's parameters either as Python scalars (one
distribution, ``shape`` samples) or as NDArrays of one shape (one distribution per element;
the result has shape ``param.shape + shape``), as MXNet's ``nd.random.*`` do. The numbers
are torch's, not MXNet's: ``mx.random.seed`` makes them repeat, and the distributions are
the same.

This module also provides MXNet's older spellings that live in ``nd`` itself
(``random_uniform``, ``sample_normal``, ``random_pdf_gamma``, ...; see ``_LEGACY``).
"""
from __future__ import annotations

import math
import numbers

import torch

from ..base import MXNetError, to_torch_dtype
from ..context import current_context
from ..random import generator
from .ndarray import NDArray, _new, _new_on, _run
from . import _failure

__all__ = ["uniform", "normal", "randn", "randint", "shuffle", "exponential", "gamma",
           "poisson", "multinomial", "negative_binomial", "generalized_negative_binomial",
           "uniform_like", "normal_like", "exponential_like", "gamma_like", "poisson_like",
           "negative_binomial_like", "generalized_negative_binomial_like"]


class _ParamTypeError(TypeError, AssertionError):
    """Distribution parameters mixed scalars and NDArrays (MXNet asserts: AssertionError)."""


def _shape(shape):
    if shape is None or shape == ():
        return ()
    if isinstance(shape, numbers.Integral):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _float_dtype(dtype, default=torch.float32):
    dt = default if dtype is None else to_torch_dtype(dtype)
    if not dt.is_floating_point:
        raise MXNetError(f"the sampler's dtype must be a float type, got {dtype!r}")
    return dt


def _work_dtype(dt):
    # float16/bfloat16 are drawn in float32 and rounded, so that every dtype gets the same
    # quality of numbers on every device.
    return torch.float64 if dt is torch.float64 else torch.float32


class _Params:
    """The parameters of one sampler call, as tensors of a common shape, with the shape of
    the output and the device to draw on."""

    def __init__(self, name, params, shape, ctx, out):
        arrays = {k: v for k, v in params.items() if isinstance(v, NDArray)}
        if arrays and len(arrays) != len(params):
            raise _ParamTypeError(
                f"{name}: distribution parameters must all be NDArrays or all be scalars, got "
                + ", ".join(f"{k}={type(v).__name__}" for k, v in params.items()))
        self.multi = bool(arrays)
        if self.multi:
            first = next(iter(arrays.values()))
            pshape = first.shape
            for k, v in arrays.items():
                if v.shape != pshape:
                    raise MXNetError(f"{name}: parameter arrays must have the same shape, got "
                                     + ", ".join(f"{k}{a.shape}" for k, a in arrays.items()))
            self.ctx = ctx or first.context
            extra = _shape(shape)
            self.shape = tuple(pshape) + extra
            self.extra = extra
        else:
            self.ctx = ctx or (out.context if out is not None else current_context())
            if shape is None and out is not None:
                self.shape = tuple(out.shape)
            else:
                self.shape = _shape(shape) or (1,)
            self.extra = ()
        self.params = params
        self.device = self.ctx.torch_device

    def get(self, key, dtype):
        """Parameter ``key`` as a tensor that broadcasts against the output shape."""
        v = self.params[key]
        if isinstance(v, NDArray):
            t = v._t.detach().to(self.device, dtype)
            return t.reshape(tuple(t.shape) + (1,) * len(self.extra))
        return torch.tensor(float(v), dtype=dtype, device=self.device)

    def full(self, key, dtype):
        return self.get(key, dtype).expand(self.shape).contiguous()

    @property
    def gen(self):
        return generator(self.device)


def _invalid(p, dtype, out, message):
    """The result of a sampler whose scalar parameters are invalid: MXNet checks them in the
    kernel, so the error comes at the next synchronisation on the result (see _failure)."""
    t = _failure.failed(MXNetError(message), p.shape, dtype, p.device)
    if out is not None:
        out._t = t
        return out
    return _new_on(t, p.ctx)


def _bad(p, **checks):
    """The message of the first failed check among scalar parameters (None: all fine)."""
    if p.multi:
        return None  # (MXNet does not check parameter arrays)
    for message, ok in checks.items():
        if not ok:
            return message
    return None


def _finish(t, p, dtype, out):
    t = t.to(dtype)
    if out is not None:
        if tuple(out.shape) != tuple(t.shape):
            raise MXNetError(f"out has shape {out.shape}, the samples have shape "
                             f"{tuple(t.shape)}")
        out[:] = _new(t, p.ctx)
        return out
    return _new_on(t, p.ctx)


def _out_dtype(dtype, out, default=torch.float32):
    if dtype is None and out is not None:
        return out._t.dtype
    return _float_dtype(dtype, default)


# ----------------------------------------------------------------------- continuous
def uniform(low=0.0, high=1.0, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the uniform distribution on ``[low, high)``.

    Parameters
    ----------
    low, high : float or NDArray
        Bounds (NDArrays of one shape give one distribution per element).
    shape : int or tuple of int, optional
        Samples per distribution.
    dtype : str, optional
        float32 by default.
    ctx : Context, optional
        Where the samples go (the parameters' or the current context by default).
    out : NDArray, optional
    """
    p = _Params("uniform", {"low": low, "high": high}, shape, ctx, out)
    dt = _out_dtype(dtype, out)
    bad = _bad(p, **{f"uniform: low ({low}) must be less than or equal to high ({high})":
                     p.multi or high >= low})
    if bad:
        return _invalid(p, dt, out, bad)
    wd = _work_dtype(dt)
    u = torch.rand(p.shape, generator=p.gen, dtype=wd, device=p.device)
    lo, hi = p.get("low", wd), p.get("high", wd)
    return _finish(lo + u * (hi - lo), p, dt, out)


def normal(loc=0.0, scale=1.0, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the normal distribution N(loc, scale**2).

    Parameters
    ----------
    loc, scale : float or NDArray
        Mean and standard deviation.
    shape : int or tuple of int, optional
    dtype : str, optional
    ctx : Context, optional
    out : NDArray, optional
    """
    p = _Params("normal", {"loc": loc, "scale": scale}, shape, ctx, out)
    dt = _out_dtype(dtype, out)
    bad = _bad(p, **{f"normal: scale ({scale}) has to be positive": p.multi or scale > 0})
    if bad:
        return _invalid(p, dt, out, bad)
    wd = _work_dtype(dt)
    z = torch.randn(p.shape, generator=p.gen, dtype=wd, device=p.device)
    return _finish(p.get("loc", wd) + z * p.get("scale", wd), p, dt, out)


def randn(*shape, **kwargs):
    """Samples from N(loc, scale**2), the shape given as positional arguments.

    Parameters
    ----------
    *shape : int
    loc, scale : float or NDArray, keyword
        Mean and standard deviation (0 and 1 by default).
    dtype, ctx, out : keyword, optional
    """
    loc = kwargs.pop("loc", 0.0)
    scale = kwargs.pop("scale", 1.0)
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return normal(loc, scale, shape=shape or None, **kwargs)


def exponential(scale=1.0, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the exponential distribution with mean ``scale`` (rate ``1/scale``).

    Parameters
    ----------
    scale : float or NDArray
    shape, dtype, ctx, out : optional
    """
    p = _Params("exponential", {"scale": scale}, shape, ctx, out)
    dt = _out_dtype(dtype, out)
    bad = _bad(p, **{f"exponential: scale ({scale}) has to be positive": p.multi or scale > 0})
    if bad:
        return _invalid(p, dt, out, bad)
    wd = _work_dtype(dt)
    e = torch.empty(p.shape, dtype=wd, device=p.device).exponential_(1.0, generator=p.gen)
    return _finish(e * p.get("scale", wd), p, dt, out)


def _std_gamma(alpha, gen):
    # torch's Marsaglia-Tsang sampler, in float32 at least.
    a = alpha if alpha.dtype in (torch.float32, torch.float64) else alpha.float()
    return torch._standard_gamma(a, generator=gen)


def gamma(alpha=1.0, beta=1.0, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the gamma distribution with shape ``alpha`` and scale ``beta``.

    Parameters
    ----------
    alpha, beta : float or NDArray
    shape, dtype, ctx, out : optional
    """
    p = _Params("gamma", {"alpha": alpha, "beta": beta}, shape, ctx, out)
    dt = _out_dtype(dtype, out)
    bad = _bad(p, **{f"gamma: alpha ({alpha}) has to be positive": p.multi or alpha > 0,
                     f"gamma: beta ({beta}) has to be positive": p.multi or beta > 0})
    if bad:
        return _invalid(p, dt, out, bad)
    wd = _work_dtype(dt)
    g = _std_gamma(p.full("alpha", wd), p.gen)
    return _finish(g * p.get("beta", wd), p, dt, out)


# ------------------------------------------------------------------------- discrete
def poisson(lam=1.0, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples (as floats) from the Poisson distribution with rate ``lam``.

    Parameters
    ----------
    lam : float or NDArray
    shape, dtype, ctx, out : optional
    """
    p = _Params("poisson", {"lam": lam}, shape, ctx, out)
    dt = _out_dtype(dtype, out)
    bad = _bad(p, **{f"poisson: lam ({lam}) has to be non-negative": p.multi or lam >= 0})
    if bad:
        return _invalid(p, dt, out, bad)
    wd = _work_dtype(dt)
    return _finish(torch.poisson(p.full("lam", wd), generator=p.gen), p, dt, out)


def negative_binomial(k=1, p=1.0, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples (as floats) of the number of failures before the ``k``-th success, with
    success probability ``p``.

    Parameters
    ----------
    k : int or NDArray
    p : float or NDArray
    shape, dtype, ctx, out : optional
    """
    ps = _Params("negative_binomial", {"k": k, "p": p}, shape, ctx, out)
    dt = _out_dtype(dtype, out)
    bad = _bad(ps, **{f"negative_binomial: k ({k}) has to be non-negative": ps.multi or k >= 0,
                      f"negative_binomial: p ({p}) has to lie in [0, 1]":
                      ps.multi or 0 <= p <= 1})
    if bad:
        return _invalid(ps, dt, out, bad)
    prob = ps.get("p", torch.float64)
    lam = _std_gamma(ps.full("k", torch.float64), ps.gen) * ((1.0 - prob) / prob)
    return _finish(torch.poisson(lam, generator=ps.gen), ps, dt, out)


def generalized_negative_binomial(mu=1.0, alpha=1.0, shape=None, dtype=None, ctx=None,
                                  out=None, **kwargs):
    """Samples (as floats) from the negative binomial with mean ``mu`` and dispersion
    ``alpha`` (variance ``mu + alpha*mu**2``; ``alpha=0`` is Poisson).

    Parameters
    ----------
    mu, alpha : float or NDArray
    shape, dtype, ctx, out : optional
    """
    p = _Params("generalized_negative_binomial", {"mu": mu, "alpha": alpha}, shape, ctx, out)
    dt = _out_dtype(dtype, out)
    bad = _bad(p, **{f"generalized_negative_binomial: mu ({mu}) has to be non-negative":
                     p.multi or mu >= 0,
                     f"generalized_negative_binomial: alpha ({alpha}) has to be non-negative":
                     p.multi or alpha >= 0})
    if bad:
        return _invalid(p, dt, out, bad)
    mu_t = p.full("mu", torch.float64)
    al = p.full("alpha", torch.float64)
    pos = al > 0
    conc = torch.where(pos, 1.0 / torch.where(pos, al, 1.0), torch.ones_like(al))
    lam = torch.where(pos, _std_gamma(conc, p.gen) * al * mu_t, mu_t)
    return _finish(torch.poisson(lam, generator=p.gen), p, dt, out)


def randint(low, high, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Integers drawn uniformly from ``[low, high)``.

    Parameters
    ----------
    low, high : int
    shape : int or tuple of int, optional
    dtype : {'int32', 'int64'}, optional
        int32 by default.
    ctx, out : optional
    """
    for nm, v in (("low", low), ("high", high)):
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise MXNetError(f"randint: {nm} must be an integer, got {v!r}")
    if dtype is None:
        dt = out._t.dtype if out is not None else torch.int32
    else:
        dt = to_torch_dtype(dtype)
    if dt not in (torch.int32, torch.int64):
        raise MXNetError(f"randint: dtype must be 'int32' or 'int64', got {dtype!r}")
    if high <= low:
        raise MXNetError(f"randint: high ({high}) must be larger than low ({low})")
    p = _Params("randint", {}, shape, ctx, out)
    t = torch.randint(int(low), int(high), p.shape, generator=p.gen, device=p.device,
                      dtype=torch.int64)
    if out is not None:
        out[:] = _new(t.to(dt), p.ctx)
        return out
    return _new_on(t.to(dt), p.ctx)


def _max_exact_int(dt):
    """The largest category index ``dt`` holds exactly."""
    if dt.is_floating_point:
        return int(2 / torch.finfo(dt).eps)     # 2 ** (mantissa bits + 1)
    return torch.iinfo(dt).max


def multinomial(data, shape=None, get_prob=False, out=None, dtype="int32", **kwargs):
    """Draw category indices from the distributions in the last axis of ``data``.

    Parameters
    ----------
    data : NDArray
        Probabilities (each row sums to 1), shape ``batch + (k,)``.
    shape : int or tuple of int, optional
        Samples per distribution; the result has shape ``batch + shape``.
    get_prob : bool
        Also return the log-probability of each draw (differentiable with respect to
        ``data``, as MXNet's, for REINFORCE-style training).
    out : NDArray, optional
    dtype : str
        The indices' dtype (int32 by default).

    Returns
    -------
    NDArray, or [samples, log_probs] with ``get_prob``.
    """
    if not isinstance(data, NDArray):
        raise TypeError(f"multinomial: data must be an NDArray, got {type(data).__name__}")
    p = data._t
    dt = to_torch_dtype(dtype)
    k = p.shape[-1] if p.dim() else 1
    if k - 1 > _max_exact_int(dt):
        raise MXNetError(f"multinomial: dtype {dtype} cannot represent the category indices "
                         f"of a distribution over {k} categories")
    extra = _shape(shape)
    n = 1
    for d in extra:
        n *= d
    flat = p.detach().reshape(-1, k)
    work = flat if flat.dtype in (torch.float32, torch.float64) else flat.float()
    if n:
        idx = torch.multinomial(work, n, replacement=True, generator=generator(p.device))
    else:
        idx = torch.zeros((flat.shape[0], 0), dtype=torch.int64, device=p.device)
    out_shape = tuple(p.shape[:-1]) + extra
    idx = idx.reshape(out_shape if out_shape else (1,))
    res = _new(idx.to(dt), data._ctx)
    if out is not None:
        out[:] = res
        res = out
    if not get_prob:
        return res

    def log_prob():
        rows = p.reshape(-1, k)
        picked = torch.gather(rows, 1, idx.reshape(rows.shape[0], -1))
        return torch.log(picked).reshape(idx.shape)
    return [res, _new(_run(log_prob), data._ctx)]


def shuffle(data, **kwargs):
    """A copy of ``data`` with its first axis randomly permuted.

    Parameters
    ----------
    data : NDArray
    out : NDArray, optional (keyword)
    """
    out = kwargs.pop("out", None)
    t = data._t
    perm = torch.randperm(t.shape[0], generator=generator(t.device), device=t.device)
    r = _new(_run(t.index_select, 0, perm), data._ctx)
    if out is not None:
        out[:] = r
        return out
    return r


# ------------------------------------------------------------------- *_like samplers
def _like(sampler, name, param_names):
    def op(data=None, *args, out=None, name=None, **kwargs):
        if not isinstance(data, NDArray):
            raise TypeError(f"{op.__name__}: data must be an NDArray, got "
                            f"{type(data).__name__}")
        params = dict(zip(param_names, args))
        params.update({k: kwargs.pop(k) for k in param_names if k in kwargs})
        return sampler(shape=data.shape, dtype=kwargs.pop("dtype", data.dtype),
                       ctx=data.context, out=out, **params)
    op.__name__ = name
    op.__doc__ = (f"Samples like ``{sampler.__name__}``, with ``data``'s shape, dtype and "
                  f"context.\n\n    Parameters\n    ----------\n    data : NDArray\n    "
                  f"{', '.join(param_names)} : float\n    out : NDArray, optional\n")
    return op


uniform_like = _like(uniform, "uniform_like", ("low", "high"))
normal_like = _like(normal, "normal_like", ("loc", "scale"))
gamma_like = _like(gamma, "gamma_like", ("alpha", "beta"))
poisson_like = _like(poisson, "poisson_like", ("lam",))
negative_binomial_like = _like(negative_binomial, "negative_binomial_like", ("k", "p"))
generalized_negative_binomial_like = _like(generalized_negative_binomial,
                                           "generalized_negative_binomial_like",
                                           ("mu", "alpha"))


def exponential_like(data=None, lam=1.0, out=None, name=None, **kwargs):
    """Exponential samples with rate ``lam``, with ``data``'s shape, dtype and context.

    Parameters
    ----------
    data : NDArray
    lam : float
        The rate (the mean is ``1/lam``; MXNet's ``_like`` operator takes the rate).
    out : NDArray, optional
    """
    if not isinstance(data, NDArray):
        raise TypeError(f"exponential_like: data must be an NDArray, got {type(data).__name__}")
    return exponential(1.0 / lam, shape=data.shape, dtype=kwargs.pop("dtype", data.dtype),
                       ctx=data.context, out=out)


# ---------------------------------------------------- MXNet's legacy nd.* operators
def _scalar_params(name, **params):
    for k, v in params.items():
        if isinstance(v, NDArray):
            raise TypeError(f"{name}: {k} must be a number (use nd.sample_* or nd.random.* "
                            f"for NDArray parameters), got NDArray")


def _array_params(name, **params):
    for k, v in params.items():
        if not isinstance(v, NDArray):
            raise TypeError(f"{name}: {k} must be an NDArray, got {type(v).__name__}")


def random_uniform(low=0.0, high=1.0, shape=None, ctx=None, dtype=None, out=None, name=None,
                   **kwargs):
    """``nd.random_uniform`` (alias ``nd.uniform``): :func:`uniform` with scalar bounds."""
    _scalar_params("random_uniform", low=low, high=high)
    return uniform(low, high, shape=shape, dtype=dtype, ctx=ctx, out=out)


def random_normal(loc=0.0, scale=1.0, shape=None, ctx=None, dtype=None, out=None, name=None,
                  **kwargs):
    """``nd.random_normal`` (alias ``nd.normal``): :func:`normal` with scalar parameters."""
    _scalar_params("random_normal", loc=loc, scale=scale)
    return normal(loc, scale, shape=shape, dtype=dtype, ctx=ctx, out=out)


def random_exponential(lam=1.0, shape=None, ctx=None, dtype=None, out=None, name=None,
                       **kwargs):
    """``nd.random_exponential``: exponential samples with rate ``lam`` (mean ``1/lam``)."""
    _scalar_params("random_exponential", lam=lam)
    return exponential(1.0 / lam, shape=shape, dtype=dtype, ctx=ctx, out=out)


def random_gamma(alpha=1.0, beta=1.0, shape=None, ctx=None, dtype=None, out=None, name=None,
                 **kwargs):
    """``nd.random_gamma``: gamma samples with shape ``alpha`` and scale ``beta``."""
    _scalar_params("random_gamma", alpha=alpha, beta=beta)
    return gamma(alpha, beta, shape=shape, dtype=dtype, ctx=ctx, out=out)


def random_poisson(lam=1.0, shape=None, ctx=None, dtype=None, out=None, name=None, **kwargs):
    """``nd.random_poisson``: Poisson samples with rate ``lam``."""
    _scalar_params("random_poisson", lam=lam)
    return poisson(lam, shape=shape, dtype=dtype, ctx=ctx, out=out)


def random_negative_binomial(k=1, p=1.0, shape=None, ctx=None, dtype=None, out=None,
                             name=None, **kwargs):
    """``nd.random_negative_binomial``: see :func:`negative_binomial`."""
    _scalar_params("random_negative_binomial", k=k, p=p)
    return negative_binomial(k, p, shape=shape, dtype=dtype, ctx=ctx, out=out)


def random_generalized_negative_binomial(mu=1.0, alpha=1.0, shape=None, ctx=None, dtype=None,
                                         out=None, name=None, **kwargs):
    """``nd.random_generalized_negative_binomial``: see
    :func:`generalized_negative_binomial`."""
    _scalar_params("random_generalized_negative_binomial", mu=mu, alpha=alpha)
    return generalized_negative_binomial(mu, alpha, shape=shape, dtype=dtype, ctx=ctx, out=out)


def random_randint(low, high, shape=None, ctx=None, dtype=None, out=None, name=None, **kwargs):
    """``nd.random_randint``: see :func:`randint`."""
    return randint(low, high, shape=shape, dtype=dtype, ctx=ctx, out=out)


def sample_uniform(low, high, shape=None, dtype=None, out=None, name=None, **kwargs):
    """``nd.sample_uniform``: one uniform distribution per element of ``low``/``high``."""
    _array_params("sample_uniform", low=low, high=high)
    return uniform(low, high, shape=shape, dtype=dtype, out=out)


def sample_normal(mu, sigma, shape=None, dtype=None, out=None, name=None, **kwargs):
    """``nd.sample_normal``: one normal distribution per element of ``mu``/``sigma``."""
    _array_params("sample_normal", mu=mu, sigma=sigma)
    return normal(mu, sigma, shape=shape, dtype=dtype, out=out)


def sample_exponential(lam, shape=None, dtype=None, out=None, name=None, **kwargs):
    """``nd.sample_exponential``: one exponential distribution per rate in ``lam``."""
    _array_params("sample_exponential", lam=lam)
    return exponential(1.0 / lam, shape=shape, dtype=dtype, out=out)


def sample_gamma(alpha, beta, shape=None, dtype=None, out=None, name=None, **kwargs):
    """``nd.sample_gamma``: one gamma distribution (shape, scale) per element."""
    _array_params("sample_gamma", alpha=alpha, beta=beta)
    return gamma(alpha, beta, shape=shape, dtype=dtype, out=out)


def sample_poisson(lam, shape=None, dtype=None, out=None, name=None, **kwargs):
    """``nd.sample_poisson``: one Poisson distribution per rate in ``lam``."""
    _array_params("sample_poisson", lam=lam)
    return poisson(lam, shape=shape, dtype=dtype, out=out)


def sample_negative_binomial(k, p, shape=None, dtype=None, out=None, name=None, **kwargs):
    """``nd.sample_negative_binomial``: one distribution per element of ``k``/``p``."""
    _array_params("sample_negative_binomial", k=k, p=p)
    return negative_binomial(k, p, shape=shape, dtype=dtype, out=out)


def sample_generalized_negative_binomial(mu, alpha, shape=None, dtype=None, out=None,
                                         name=None, **kwargs):
    """``nd.sample_generalized_negative_binomial``: one distribution per element."""
    _array_params("sample_generalized_negative_binomial", mu=mu, alpha=alpha)
    return generalized_negative_binomial(mu, alpha, shape=shape, dtype=dtype, out=out)


def sample_multinomial(data, shape=None, get_prob=False, out=None, dtype="int32", name=None,
                       **kwargs):
    """``nd.sample_multinomial``: see :func:`multinomial`."""
    return multinomial(data, shape=shape, get_prob=get_prob, out=out, dtype=dtype)


# --------------------------------------------------------- densities (random_pdf_*)
def _pdf(name, logpdf, param_names, doc):
    def op(sample, *params, is_log=False, out=None, **kwargs):
        params = list(params) + [kwargs.pop(k) for k in param_names[len(params):]
                                 if k in kwargs]
        if len(params) != len(param_names):
            raise TypeError(f"{name}: expects sample and {', '.join(param_names)}")
        if not isinstance(sample, NDArray) or not all(isinstance(v, NDArray) for v in params):
            raise TypeError(f"{name}: sample and parameters must be NDArrays")
        s = sample._t
        pshape = params[0].shape
        for nm, v in zip(param_names, params):
            if v.shape != pshape:
                raise MXNetError(f"{name}: parameter {nm} has shape {v.shape}, expected "
                                 f"{pshape}")
        if tuple(s.shape[:len(pshape)]) != tuple(pshape):
            raise MXNetError(f"{name}: sample shape {tuple(s.shape)} must start with the "
                             f"parameters' shape {pshape}")

        def fn():
            extra = s.dim() - len(pshape)
            ts = [v._t.reshape(tuple(pshape) + (1,) * extra) for v in params]
            lp = logpdf(s, *ts)
            return lp if is_log else torch.exp(lp)
        r = _new(_run(fn), sample._ctx)
        if out is not None:
            out[:] = r
            return out
        return r
    op.__name__ = name
    op.__doc__ = (f"{doc}\n\n    Parameters\n    ----------\n    sample : NDArray\n"
                  f"        Shape ``params.shape + extra``; each parameter element applies to "
                  f"its trailing block.\n    {', '.join(param_names)} : NDArray\n"
                  f"    is_log : bool\n        Return the log-density.\n")
    return op


def _lp_uniform(x, low, high):
    inside = (x >= low) & (x <= high)
    return torch.where(inside, -torch.log(high - low), torch.full_like(x, -math.inf))


def _lp_normal(x, mu, sigma):
    z = (x - mu) / sigma
    return -0.5 * z * z - torch.log(sigma) - 0.5 * math.log(2 * math.pi)


def _lp_gamma(x, alpha, beta):
    # MXNet's pdf takes beta as the rate (its sampler takes the scale).
    return (alpha * torch.log(beta) + (alpha - 1) * torch.log(x) - beta * x
            - torch.lgamma(alpha))


def _lp_exponential(x, lam):
    return torch.log(lam) - lam * x


def _lp_poisson(x, lam):
    return x * torch.log(lam) - torch.lgamma(x + 1) - lam


def _lp_negative_binomial(x, k, p):
    return (torch.lgamma(x + k) - torch.lgamma(x + 1) - torch.lgamma(k) + k * torch.log(p)
            + x * torch.log1p(-p))


def _lp_generalized_negative_binomial(x, mu, alpha):
    k = 1.0 / alpha
    p = 1.0 / (mu * alpha + 1.0)
    return _lp_negative_binomial(x, k, p)


def _dirichlet_pdf(sample, alpha, is_log=False, out=None, **kwargs):
    """``nd.random_pdf_dirichlet``: the Dirichlet density of ``sample`` (last axis: the
    simplex coordinates) under concentration ``alpha`` (shape ``batch + (k,)``; the sample
    has shape ``batch + extra + (k,)``)."""
    s = sample._t
    a_shape = alpha.shape
    extra = s.dim() - len(a_shape)

    def fn():
        a = alpha._t.reshape(tuple(a_shape[:-1]) + (1,) * extra + (a_shape[-1],))
        lp = (torch.lgamma(a.sum(-1)) - torch.lgamma(a).sum(-1)
              + ((a - 1) * torch.log(s)).sum(-1))
        return lp if is_log else torch.exp(lp)
    r = _new(_run(fn), sample._ctx)
    if out is not None:
        out[:] = r
        return out
    return r


random_pdf_uniform = _pdf("random_pdf_uniform", _lp_uniform, ("low", "high"),
                          "Density of the uniform distribution on [low, high] (0 outside it;\n"
                          "    MXNet 1.9.1 returns 1/(high-low) there too).")
random_pdf_normal = _pdf("random_pdf_normal", _lp_normal, ("mu", "sigma"),
                         "Density of the normal distribution N(mu, sigma**2).")
random_pdf_gamma = _pdf("random_pdf_gamma", _lp_gamma, ("alpha", "beta"),
                        "Density of the gamma distribution with shape alpha and rate beta.")
random_pdf_exponential = _pdf("random_pdf_exponential", _lp_exponential, ("lam",),
                              "Density of the exponential distribution with rate lam.")
random_pdf_poisson = _pdf("random_pdf_poisson", _lp_poisson, ("lam",),
                          "Probability mass of the Poisson distribution with rate lam.")
random_pdf_negative_binomial = _pdf("random_pdf_negative_binomial", _lp_negative_binomial,
                                    ("k", "p"),
                                    "Probability mass of the negative binomial (k, p).")
random_pdf_generalized_negative_binomial = _pdf(
    "random_pdf_generalized_negative_binomial", _lp_generalized_negative_binomial,
    ("mu", "alpha"), "Probability mass of the negative binomial with mean mu and "
                     "dispersion alpha.")
random_pdf_dirichlet = _dirichlet_pdf
random_pdf_dirichlet.__name__ = "random_pdf_dirichlet"

# The names MXNet 1.x puts in ``nd`` itself (exported there by ndarray/__init__.py).
_LEGACY = {
    "random_uniform": random_uniform, "uniform": random_uniform,
    "random_normal": random_normal, "normal": random_normal,
    "random_exponential": random_exponential, "random_gamma": random_gamma,
    "random_poisson": random_poisson, "random_negative_binomial": random_negative_binomial,
    "random_generalized_negative_binomial": random_generalized_negative_binomial,
    "random_randint": random_randint,
    "sample_uniform": sample_uniform, "sample_normal": sample_normal,
    "sample_exponential": sample_exponential, "sample_gamma": sample_gamma,
    "sample_poisson": sample_poisson, "sample_negative_binomial": sample_negative_binomial,
    "sample_generalized_negative_binomial": sample_generalized_negative_binomial,
    "sample_multinomial": sample_multinomial, "shuffle": shuffle,
    "random_pdf_uniform": random_pdf_uniform, "random_pdf_normal": random_pdf_normal,
    "random_pdf_gamma": random_pdf_gamma, "random_pdf_exponential": random_pdf_exponential,
    "random_pdf_poisson": random_pdf_poisson,
    "random_pdf_negative_binomial": random_pdf_negative_binomial,
    "random_pdf_generalized_negative_binomial": random_pdf_generalized_negative_binomial,
    "random_pdf_dirichlet": random_pdf_dirichlet,
}
