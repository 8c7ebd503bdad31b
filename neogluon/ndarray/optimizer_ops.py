"""MXNet's multi-tensor and two-phase optimizer operators, with MXNet 1.9.1's signatures.

``nd.multi_sgd_update`` & co (the aggregated SGD updates, also ``preloaded_*`` with the rates
as arrays), ``nd.lamb_update_phase1/2`` (and ``mp_``), ``nd.multi_sum_sq``, ``nd.multi_lars``,
``nd.all_finite``, ``nd.multi_all_finite`` and, under ``nd.contrib``, ``adamw_update``,
``mp_adamw_update``, ``multi_adamw_update``, ``multi_mp_adamw_update``,
``group_adagrad_update``, ``multi_lamb_update`` and ``multi_mp_lamb_update``.

As MXNet's operators do, each returns the new weight(s) (written into ``out`` when given; a
program usually passes ``out=weight``) and updates the optimizer states passed in (momentum,
mean, variance, float32 master weights) in place. The maths is MXNet's, computed in the
weight's dtype (float32 for the ``mp_`` variants, whose float16 weight is the cast of the
updated float32 master copy).
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ..base import MXNetError
from .ndarray import NDArray, _new

__all__ = ["multi_sgd_update", "multi_sgd_mom_update", "multi_mp_sgd_update",
           "multi_mp_sgd_mom_update", "preloaded_multi_sgd_update",
           "preloaded_multi_sgd_mom_update", "preloaded_multi_mp_sgd_update",
           "preloaded_multi_mp_sgd_mom_update", "lamb_update_phase1", "lamb_update_phase2",
           "mp_lamb_update_phase1", "mp_lamb_update_phase2", "multi_sum_sq", "multi_lars",
           "all_finite", "multi_all_finite"]

#: The operators MXNet keeps under ``nd.contrib``.
CONTRIB = ["adamw_update", "mp_adamw_update", "multi_adamw_update", "multi_mp_adamw_update",
           "group_adagrad_update", "multi_lamb_update", "multi_mp_lamb_update"]


# ----------------------------------------------------------------------------- helpers
def _arr(x, op, what):
    if not isinstance(x, NDArray):
        raise TypeError(f"{op}: {what} must be an NDArray, got {type(x).__name__}")
    if x.stype != "default":
        x = x.tostype("default")
    return x._t.detach()


def _state(x, op, what):
    """The tensor of a state MXNet's operator mutates: the array's own storage."""
    if not isinstance(x, NDArray):
        raise TypeError(f"{op}: {what} must be an NDArray, got {type(x).__name__}")
    if x.stype != "default":
        raise MXNetError(f"{op}: {what} must be a dense array, got storage type {x.stype!r}")
    return x._t


def _same_shape(op, ref_name, ref, **others):
    for name, t in others.items():
        if tuple(t.shape) != tuple(ref.shape):
            raise MXNetError(f"{op}: {name} has shape {tuple(t.shape)}, {ref_name} has "
                             f"{tuple(ref.shape)}; they must match")


def _clip(g, clip_gradient):
    if clip_gradient is not None and clip_gradient >= 0:
        return g.clamp(-clip_gradient, clip_gradient)
    return g


def _one_minus(beta):
    """``1 - beta`` rounded as MXNet's float32 operator parameters compute it."""
    return float(np.float32(1.0) - np.float32(beta))


def _prod(a, b, dtype):
    """``a * b`` rounded as the operator computes it in ``dtype`` (float32 for float16)."""
    if dtype == torch.float64:
        return a * b
    return float(np.float32(a) * np.float32(b))


def _rescaled(grad_t, rescale_grad, clip_gradient, dtype):
    return _clip(grad_t.to(dtype) * rescale_grad, clip_gradient)


def _write(result, like, out, op):
    """Return ``result`` as MXNet does: in ``out`` when given, else as a new array."""
    if out is None:
        return _new(result, like._ctx)
    if not isinstance(out, NDArray):
        raise TypeError(f"{op}: out must be an NDArray, got {type(out).__name__}")
    if tuple(out.shape) != tuple(result.shape):
        raise MXNetError(f"{op}: out has shape {out.shape}, the result {tuple(result.shape)}")
    out[:] = _new(result, like._ctx)
    return out


def _write_many(results, likes, out, op):
    if out is None:
        return [_new(r, w._ctx) for r, w in zip(results, likes)]
    outs = [out] if isinstance(out, NDArray) else list(out)
    if len(outs) != len(results):
        raise MXNetError(f"{op}: {len(outs)} outputs given for {len(results)} weights")
    for o, r, w in zip(outs, results, likes):
        _write(r, w, o, op)
    return outs if len(outs) > 1 or not isinstance(out, NDArray) else outs[0]


def _rates(values, n, op, what):
    """``lrs`` / ``wds`` / ``etas``: a number (for one weight) or a sequence of ``n``."""
    if isinstance(values, NDArray):
        values = values.asnumpy().reshape(-1).tolist()
    elif isinstance(values, (int, float, np.generic)):
        values = [float(values)]
    try:
        values = [float(v) for v in values]
    except TypeError:
        raise TypeError(f"{op}: {what} must be a sequence of numbers, got "
                        f"{type(values).__name__}") from None
    if len(values) != n:
        raise MXNetError(f"{op}: {what} has {len(values)} entries for {n} weights")
    return values


def _groups(data, size, num_weights, op, what):
    data = list(data)
    for i, d in enumerate(data):
        if not isinstance(d, NDArray):
            raise TypeError(f"{op}: input {i} must be an NDArray, got {type(d).__name__}")
    if num_weights is None:
        num_weights = len(data) // size
    if num_weights < 1 or len(data) != size * num_weights:
        raise MXNetError(f"{op}: expected {size} arrays ({what}) per weight for "
                         f"{num_weights} weights, got {len(data)} arrays")
    return [data[k * size:(k + 1) * size] for k in range(num_weights)]


def _scale_factor(rescale_grad, op):
    """AdamW's ``rescale_grad`` (an NDArray of one element, or a number) as a float."""
    if isinstance(rescale_grad, NDArray):
        if rescale_grad.size != 1:
            raise MXNetError(f"{op}: rescale_grad must hold one value, got shape "
                             f"{rescale_grad.shape}")
        return float(rescale_grad.asnumpy().reshape(-1)[0])
    if isinstance(rescale_grad, (int, float, np.generic)):
        return float(rescale_grad)
    raise TypeError(f"{op}: rescale_grad must be an NDArray or a number, got "
                    f"{type(rescale_grad).__name__}")


def _skipped(scale):
    """MXNet's AdamW skips its update when the rescale factor is 0, NaN or infinite (what a
    loss scaler reports for an overflowed step)."""
    return scale == 0.0 or not math.isfinite(scale)


# ------------------------------------------------------------------ aggregated SGD updates
def _sgd_steps(op, groups, lrs, wds, momentum, rescale_grad, clip_gradient, mp, mom):
    results, likes = [], []
    with torch.no_grad():
        for k, arrs in enumerate(groups):
            weight, grad = arrs[0], arrs[1]
            w = _arr(weight, op, f"weight {k}")
            g = _arr(grad, op, f"gradient {k}")
            _same_shape(op, f"weight {k}", w, **{f"gradient {k}": g})
            m = _state(arrs[2], op, f"momentum {k}") if mom else None
            w32 = _state(arrs[-1], op, f"weight32 {k}") if mp else None
            base = w32 if mp else w
            if mp and w32.dtype != torch.float32:
                raise MXNetError(f"{op}: weight32 {k} must be float32, got {w32.dtype}")
            lr, wd = lrs[k], wds[k]
            # MXNet's kernel order, each scalar product rounded to the weight's precision:
            # step = (lr*rescale)*g or lr*clip(rescale*g); w + (0 - (lr*wd)*w - step)
            lrwd = _prod(lr, wd, base.dtype)
            if clip_gradient is not None and clip_gradient >= 0:
                step = _clip(g.to(base.dtype) * rescale_grad, clip_gradient) * lr
            else:
                step = g.to(base.dtype) * _prod(lr, rescale_grad, base.dtype)
            if mom:
                _same_shape(op, f"weight {k}", w, **{f"momentum {k}": m})
                m.copy_(m * momentum - base * lrwd - step)
                new = base + m
            else:
                new = base + (-(base * lrwd) - step)
            if mp:
                w32.copy_(new)
                new = new.to(w.dtype)
            results.append(new)
            likes.append(weight)
    return results, likes


def _multi_sgd(op, data, lrs, wds, momentum, rescale_grad, clip_gradient, num_weights, out,
               mp, mom, preloaded):
    data = list(data)
    if preloaded:
        if len(data) < 2:
            raise MXNetError(f"{op}: the last two inputs must be the learning rates and "
                             "weight decays")
        data, lr_arr, wd_arr = data[:-2], data[-2], data[-1]
    size = 2 + int(mom) + int(mp)
    what = "weight, gradient" + (", momentum" if mom else "") + (", weight32" if mp else "")
    groups = _groups(data, size, num_weights, op, what)
    n = len(groups)
    if preloaded:
        lrs = _rates(lr_arr, n, op, "lrs")
        wds = _rates(wd_arr, n, op, "wds")
    else:
        lrs = _rates(lrs, n, op, "lrs")
        wds = _rates(wds, n, op, "wds")
    results, likes = _sgd_steps(op, groups, lrs, wds, momentum, rescale_grad, clip_gradient,
                                mp, mom)
    return _write_many(results, likes, out, op)


def multi_sgd_update(*data, lrs=None, wds=None, rescale_grad=1.0, clip_gradient=-1.0,
                     num_weights=None, out=None, name=None):
    """SGD on several weights at once: ``weight = weight - lr * (clip(rescale_grad * grad)
    + wd * weight)``.

    Parameters
    ----------
    *data : NDArray
        ``weight0, grad0, weight1, grad1, ...``
    lrs, wds : sequence of float
        One learning rate and one weight decay per weight.
    rescale_grad : float, default 1
    clip_gradient : float, default -1
        Clip the rescaled gradient to ``[-clip_gradient, clip_gradient]``; negative: no clip.
    num_weights : int, optional
        The number of weights (``len(data) // 2`` when omitted).
    out : list of NDArray, optional
        Where the new weights go (usually the weights themselves).

    Returns
    -------
    list of NDArray
    """
    return _multi_sgd("multi_sgd_update", data, lrs, wds, 0.0, rescale_grad, clip_gradient,
                      num_weights, out, mp=False, mom=False, preloaded=False)


def multi_sgd_mom_update(*data, lrs=None, wds=None, momentum=0.0, rescale_grad=1.0,
                         clip_gradient=-1.0, num_weights=None, out=None, name=None):
    """SGD with momentum on several weights: ``mom = momentum * mom - lr * wd * weight -
    lr * clip(rescale_grad * grad)``, ``weight = weight + mom``.

    Parameters
    ----------
    *data : NDArray
        ``weight0, grad0, mom0, weight1, ...``; the momenta are updated in place.
    lrs, wds : sequence of float
    momentum : float, default 0
    rescale_grad, clip_gradient, num_weights, out
        As :func:`multi_sgd_update`.

    Returns
    -------
    list of NDArray
    """
    return _multi_sgd("multi_sgd_mom_update", data, lrs, wds, momentum, rescale_grad,
                      clip_gradient, num_weights, out, mp=False, mom=True, preloaded=False)


def multi_mp_sgd_update(*data, lrs=None, wds=None, rescale_grad=1.0, clip_gradient=-1.0,
                        num_weights=None, out=None, name=None):
    """:func:`multi_sgd_update` on float32 master copies of (float16) weights.

    Parameters
    ----------
    *data : NDArray
        ``weight0, grad0, weight32_0, weight1, ...``; the float32 copies are updated in
        place and the new weights are their casts.
    lrs, wds, rescale_grad, clip_gradient, num_weights, out
        As :func:`multi_sgd_update`.

    Returns
    -------
    list of NDArray
    """
    return _multi_sgd("multi_mp_sgd_update", data, lrs, wds, 0.0, rescale_grad, clip_gradient,
                      num_weights, out, mp=True, mom=False, preloaded=False)


def multi_mp_sgd_mom_update(*data, lrs=None, wds=None, momentum=0.0, rescale_grad=1.0,
                            clip_gradient=-1.0, num_weights=None, out=None, name=None):
    """:func:`multi_sgd_mom_update` on float32 master copies of (float16) weights.

    Parameters
    ----------
    *data : NDArray
        ``weight0, grad0, mom0, weight32_0, weight1, ...``
    lrs, wds, momentum, rescale_grad, clip_gradient, num_weights, out
        As :func:`multi_sgd_mom_update`.

    Returns
    -------
    list of NDArray
    """
    return _multi_sgd("multi_mp_sgd_mom_update", data, lrs, wds, momentum, rescale_grad,
                      clip_gradient, num_weights, out, mp=True, mom=True, preloaded=False)


def preloaded_multi_sgd_update(*data, rescale_grad=1.0, clip_gradient=-1.0, num_weights=None,
                               out=None, name=None):
    """:func:`multi_sgd_update` with the learning rates and weight decays passed as the last
    two inputs (1-D NDArrays)."""
    return _multi_sgd("preloaded_multi_sgd_update", data, None, None, 0.0, rescale_grad,
                      clip_gradient, num_weights, out, mp=False, mom=False, preloaded=True)


def preloaded_multi_sgd_mom_update(*data, momentum=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                                   num_weights=None, out=None, name=None):
    """:func:`multi_sgd_mom_update` with the learning rates and weight decays passed as the
    last two inputs (1-D NDArrays)."""
    return _multi_sgd("preloaded_multi_sgd_mom_update", data, None, None, momentum,
                      rescale_grad, clip_gradient, num_weights, out, mp=False, mom=True,
                      preloaded=True)


def preloaded_multi_mp_sgd_update(*data, rescale_grad=1.0, clip_gradient=-1.0,
                                  num_weights=None, out=None, name=None):
    """:func:`multi_mp_sgd_update` with the learning rates and weight decays passed as the
    last two inputs (1-D NDArrays)."""
    return _multi_sgd("preloaded_multi_mp_sgd_update", data, None, None, 0.0, rescale_grad,
                      clip_gradient, num_weights, out, mp=True, mom=False, preloaded=True)


def preloaded_multi_mp_sgd_mom_update(*data, momentum=0.0, rescale_grad=1.0,
                                      clip_gradient=-1.0, num_weights=None, out=None,
                                      name=None):
    """:func:`multi_mp_sgd_mom_update` with the learning rates and weight decays passed as
    the last two inputs (1-D NDArrays)."""
    return _multi_sgd("preloaded_multi_mp_sgd_mom_update", data, None, None, momentum,
                      rescale_grad, clip_gradient, num_weights, out, mp=True, mom=True,
                      preloaded=True)


# ------------------------------------------------------------------------------- LAMB
def _lamb1(op, weight, grad, mean, var, weight32, beta1, beta2, epsilon, t, bias_correction,
           wd, rescale_grad, clip_gradient):
    if t is None or wd is None:
        raise TypeError(f"{op}: t and wd are required")
    w = _arr(weight, op, "weight")
    g = _arr(grad, op, "grad")
    m = _state(mean, op, "mean")
    v = _state(var, op, "var")
    base = w if weight32 is None else _state(weight32, op, "weight32")
    _same_shape(op, "weight", w, grad=g, mean=m, var=v)
    with torch.no_grad():
        gg = _rescaled(g, rescale_grad, clip_gradient, m.dtype)
        m.mul_(beta1).add_(gg, alpha=_one_minus(beta1))
        v.mul_(beta2).add_(gg * gg, alpha=_one_minus(beta2))
        if bias_correction:
            mh = m / _one_minus(np.float32(beta1) ** np.float32(t))
            vh = v / _one_minus(np.float32(beta2) ** np.float32(t))
        else:
            mh, vh = m, v
        return mh / (vh.sqrt() + epsilon) + wd * base.to(m.dtype)


def lamb_update_phase1(weight, grad, mean, var, beta1=0.9, beta2=0.999, epsilon=1e-6, t=None,
                       bias_correction=True, wd=None, rescale_grad=1.0, clip_gradient=-1.0,
                       out=None, name=None):
    """LAMB's first phase: update ``mean`` and ``var`` in place and return the step direction
    ``g = mean_hat / (sqrt(var_hat) + epsilon) + wd * weight`` (bias-corrected by ``t`` when
    ``bias_correction``).

    Parameters
    ----------
    weight, grad, mean, var : NDArray
    beta1, beta2, epsilon : float
    t : int
        The update count (for the bias correction).
    bias_correction : bool, default True
    wd : float
    rescale_grad : float, default 1
    clip_gradient : float, default -1
        Negative: no clipping.
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    g = _lamb1("lamb_update_phase1", weight, grad, mean, var, None, beta1, beta2, epsilon, t,
               bias_correction, wd, rescale_grad, clip_gradient)
    return _write(g, weight, out, "lamb_update_phase1")


def mp_lamb_update_phase1(weight, grad, mean, var, weight32, beta1=0.9, beta2=0.999,
                          epsilon=1e-6, t=None, bias_correction=True, wd=None,
                          rescale_grad=1.0, clip_gradient=-1.0, out=None, name=None):
    """:func:`lamb_update_phase1` for a float16 weight with its float32 master copy
    ``weight32`` (the direction is float32)."""
    g = _lamb1("mp_lamb_update_phase1", weight, grad, mean, var, weight32, beta1, beta2,
               epsilon, t, bias_correction, wd, rescale_grad, clip_gradient)
    return _write(g, weight, out, "mp_lamb_update_phase1")


def _trust_lr(r1, r2, lr, lower_bound, upper_bound, op):
    r1 = float(_arr(r1, op, "r1").reshape(-1)[0])
    r2 = float(_arr(r2, op, "r2").reshape(-1)[0])
    if lower_bound is not None and lower_bound >= 0:
        r1 = max(r1, lower_bound)
    if upper_bound is not None and upper_bound >= 0:
        r1 = min(r1, upper_bound)
    if r1 == 0.0 or r2 == 0.0:
        return lr
    return lr * (r1 / r2)


def lamb_update_phase2(weight, g, r1, r2, lr=None, lower_bound=-1.0, upper_bound=-1.0,
                       out=None, name=None):
    """LAMB's second phase: ``weight - lr * (r1 / r2) * g`` with the trust ratio of the
    weight's norm ``r1`` (bounded by ``lower_bound`` / ``upper_bound`` when >= 0) and the
    direction's norm ``r2`` (ratio 1 when either is 0).

    Parameters
    ----------
    weight, g : NDArray
    r1, r2 : NDArray
        One-element norms.
    lr : float
    lower_bound, upper_bound : float, default -1
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    op = "lamb_update_phase2"
    if lr is None:
        raise TypeError(f"{op}: lr is required")
    w = _arr(weight, op, "weight")
    d = _arr(g, op, "g")
    _same_shape(op, "weight", w, g=d)
    lr_t = _trust_lr(r1, r2, lr, lower_bound, upper_bound, op)
    with torch.no_grad():
        return _write(w - lr_t * d.to(w.dtype), weight, out, op)


def mp_lamb_update_phase2(weight, g, r1, r2, weight32, lr=None, lower_bound=-1.0,
                          upper_bound=-1.0, out=None, name=None):
    """:func:`lamb_update_phase2` on the float32 master copy ``weight32`` (updated in place);
    the new weight is its cast."""
    op = "mp_lamb_update_phase2"
    if lr is None:
        raise TypeError(f"{op}: lr is required")
    w = _arr(weight, op, "weight")
    d = _arr(g, op, "g")
    w32 = _state(weight32, op, "weight32")
    _same_shape(op, "weight", w, g=d, weight32=w32)
    lr_t = _trust_lr(r1, r2, lr, lower_bound, upper_bound, op)
    with torch.no_grad():
        w32.sub_(lr_t * d.to(w32.dtype))
        return _write(w32.to(w.dtype), weight, out, op)


def _multi_lamb(op, data, mp, learning_rates, wds, step_count, beta1, beta2, epsilon,
                rescale_grad, lower_bound, upper_bound, clip_gradient, bias_correction, out):
    size = 5 if mp else 4
    groups = _groups(data, size, None, op, "weight, gradient, mean, var"
                     + (", weight32" if mp else ""))
    n = len(groups)
    lrs = _rates(learning_rates, n, op, "learning_rates")
    wds = _rates(wds, n, op, "wds")
    ts = _rates(step_count, n, op, "step_count")
    results = []
    with torch.no_grad():
        for k, arrs in enumerate(groups):
            w32 = arrs[4] if mp else None
            d = _lamb1(op, arrs[0], arrs[1], arrs[2], arrs[3], w32, beta1, beta2, epsilon,
                       ts[k], bias_correction, wds[k], rescale_grad, clip_gradient)
            base = _state(w32, op, "weight32") if mp else _arr(arrs[0], op, "weight")
            r1 = base.float().norm()
            r2 = d.float().norm()
            if lower_bound is not None and lower_bound >= 0:
                r1 = r1.clamp(min=lower_bound)
            if upper_bound is not None and upper_bound >= 0:
                r1 = r1.clamp(max=upper_bound)
            r1, r2 = float(r1), float(r2)
            lr = lrs[k] if (r1 == 0.0 or r2 == 0.0) else lrs[k] * (r1 / r2)
            new = base - lr * d.to(base.dtype)
            if mp:
                base.copy_(new)
                new = new.to(_arr(arrs[0], op, "weight").dtype)
            results.append(new)
    return _write_many(results, [a[0] for a in groups], out, op)


def multi_lamb_update(weights, grads, mean, var, step_count, lrs, wds, out=None, num_tensors=0,
                      beta1=0.9, beta2=0.999, epsilon=1e-6, rescale_grad=1.0,
                      lower_bound=-1.0, upper_bound=-1.0, clip_gradient=-1.0,
                      bias_correction=True, name=None, **kwargs):
    """LAMB (both phases) on lists of weights (``nd.contrib.multi_lamb_update``).

    Parameters
    ----------
    weights, grads, mean, var : list of NDArray
        The means and variances are updated in place.
    step_count : sequence of int
        Each weight's update count.
    lrs, wds : sequence of float
    out : list of NDArray, optional
    beta1, beta2, epsilon, rescale_grad, lower_bound, upper_bound, clip_gradient,
    bias_correction
        As :func:`lamb_update_phase1` and :func:`lamb_update_phase2`.

    Returns
    -------
    list of NDArray
    """
    data = [a for group in zip(weights, grads, mean, var) for a in group]
    return _multi_lamb("multi_lamb_update", data, False, lrs, wds, step_count, beta1, beta2,
                       epsilon, rescale_grad, lower_bound, upper_bound, clip_gradient,
                       bias_correction, out)


def multi_mp_lamb_update(weights, grads, mean, var, weights32, step_count, lrs, wds, out=None,
                         num_tensors=0, beta1=0.9, beta2=0.999, epsilon=1e-6, rescale_grad=1.0,
                         lower_bound=-1.0, upper_bound=-1.0, clip_gradient=-1.0,
                         bias_correction=True, name=None, **kwargs):
    """:func:`multi_lamb_update` on float32 master copies ``weights32`` (updated in place)."""
    data = [a for group in zip(weights, grads, mean, var, weights32) for a in group]
    return _multi_lamb("multi_mp_lamb_update", data, True, lrs, wds, step_count, beta1, beta2,
                       epsilon, rescale_grad, lower_bound, upper_bound, clip_gradient,
                       bias_correction, out)


# ------------------------------------------------------------------------ norms and checks
def multi_sum_sq(*data, num_arrays=None, out=None, name=None):
    """The sum of squares of each array, as a float32 vector of ``len(data)`` values.

    Parameters
    ----------
    *data : NDArray
    num_arrays : int, optional
        ``len(data)``; checked when given.
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    op = "multi_sum_sq"
    if not data:
        raise MXNetError(f"{op}: needs at least one array")
    if num_arrays is not None and num_arrays != len(data):
        raise MXNetError(f"{op}: num_arrays={num_arrays} but {len(data)} arrays were given")
    ts = [_arr(d, op, f"array {i}") for i, d in enumerate(data)]
    with torch.no_grad():
        sums = torch.stack([t.float().square().sum() for t in ts])
    return _write(sums, data[0], out, op)


def multi_lars(lrs, weights_sum_sq, grads_sum_sq, wds, eta=None, eps=None, rescale_grad=1.0,
               out=None, name=None):
    """LARS's layer-wise learning rates: ``lr * eta * |w| / (|g| * rescale_grad + wd * |w| +
    eps)`` from the squared norms, ``lr`` itself where either norm is 0.

    Parameters
    ----------
    lrs, weights_sum_sq, grads_sum_sq, wds : NDArray
        1-D, one entry per weight.
    eta, eps : float
    rescale_grad : float, default 1
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    op = "multi_lars"
    if eta is None or eps is None:
        raise TypeError(f"{op}: eta and eps are required")
    lr = _arr(lrs, op, "lrs")
    ws = _arr(weights_sum_sq, op, "weights_sum_sq")
    gs = _arr(grads_sum_sq, op, "grads_sum_sq")
    wd = _arr(wds, op, "wds")
    _same_shape(op, "lrs", lr, weights_sum_sq=ws, grads_sum_sq=gs, wds=wd)
    with torch.no_grad():
        w_norm = ws.sqrt()
        g_norm = gs.sqrt() * rescale_grad
        scaled = lr * eta * w_norm / (g_norm + wd * w_norm + eps)
        res = torch.where((w_norm > 0) & (g_norm > 0), scaled, lr)
    return _write(res, lrs, out, op)


def _finite_flag(ts, init_output, out, like, op):
    ok = all(bool(torch.isfinite(t).all()) for t in ts if t.is_floating_point())
    if out is not None and not init_output:
        if not ok:
            out[:] = 0.0
        return out
    flag = torch.tensor([1.0 if ok else 0.0], dtype=torch.float32, device=like._t.device)
    return _write(flag, like, out, op)


def all_finite(data, init_output=True, out=None, name=None):
    """``[1.]`` when every value of ``data`` is finite, else ``[0.]`` (float32).

    Parameters
    ----------
    data : NDArray
    init_output : bool, default True
        False: leave ``out`` as it is when every value is finite (it is only set to 0), so
        one flag can collect several checks.
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    return _finite_flag([_arr(data, "all_finite", "data")], init_output, out, data,
                        "all_finite")


def multi_all_finite(*data, num_arrays=None, init_output=True, out=None, name=None):
    """:func:`all_finite` over several arrays at once."""
    op = "multi_all_finite"
    if not data:
        raise MXNetError(f"{op}: needs at least one array")
    if num_arrays is not None and num_arrays != len(data):
        raise MXNetError(f"{op}: num_arrays={num_arrays} but {len(data)} arrays were given")
    ts = [_arr(d, op, f"array {i}") for i, d in enumerate(data)]
    return _finite_flag(ts, init_output, out, data[0], op)


# ------------------------------------------------------------------------------- AdamW
def _adamw_steps(op, groups, scale, lrs, etas, wds, beta1, beta2, epsilon, clip_gradient, mp):
    results = []
    with torch.no_grad():
        for k, arrs in enumerate(groups):
            weight, grad, mean, var = arrs[:4]
            w = _arr(weight, op, f"weight {k}" if len(groups) > 1 else "weight")
            g = _arr(grad, op, "grad")
            m = _state(mean, op, "mean")
            v = _state(var, op, "var")
            w32 = _state(arrs[4], op, "weight32") if mp else None
            _same_shape(op, "weight", w, grad=g, mean=m, var=v,
                        **({"weight32": w32} if mp else {}))
            if _skipped(scale):
                results.append(None)
                continue
            base = w32 if mp else w
            gg = _rescaled(g, scale, clip_gradient, m.dtype)
            m.mul_(beta1).add_(gg, alpha=_one_minus(beta1))
            v.mul_(beta2).add_(gg * gg, alpha=_one_minus(beta2))
            step = lrs[k] * m / (v.sqrt() + epsilon) + wds[k] * base.to(m.dtype)
            new = base - etas[k] * step.to(base.dtype)
            if mp:
                w32.copy_(new)
                new = new.to(w.dtype)
            results.append(new)
    return results


def _adamw_out(results, groups, out, op):
    """A skipped update leaves ``out`` as it is; without ``out`` it returns a copy of the
    weight (MXNet returns an output it never wrote)."""
    outs = None if out is None else ([out] if isinstance(out, NDArray) else list(out))
    if outs is not None and len(outs) != len(results):
        raise MXNetError(f"{op}: {len(outs)} outputs given for {len(results)} weights")
    ret = []
    for k, (r, arrs) in enumerate(zip(results, groups)):
        o = None if outs is None else outs[k]
        if r is None:
            ret.append(o if o is not None else arrs[0].copy())
        else:
            ret.append(_write(r, arrs[0], o, op))
    return ret


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, wd=0.0, clip_gradient=-1.0, out=None, name=None):
    """AdamW's step (``nd.contrib.adamw_update``): with ``g = clip(rescale_grad * grad)``,
    ``mean = beta1 * mean + (1 - beta1) * g``, ``var = beta2 * var + (1 - beta2) * g**2``,
    ``weight - eta * (lr * mean / (sqrt(var) + epsilon) + wd * weight)``. No bias correction.

    The update is skipped (weight and states unchanged) when ``rescale_grad`` is 0, NaN or
    infinite, as a dynamic loss scaler needs. Otherwise ``grad`` is left holding
    ``rescale_grad * grad``, as MXNet 1.9.1's kernel leaves it (the mixed-precision and
    multi-tensor forms keep their gradients).

    Parameters
    ----------
    weight, grad, mean, var : NDArray
        ``mean`` and ``var`` are updated in place.
    rescale_grad : NDArray or float
        A one-element array (or a number).
    lr : float
    eta : float
        The schedule multiplier.
    beta1, beta2, epsilon, wd : float
    clip_gradient : float, default -1
        Negative: no clipping.
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    op = "adamw_update"
    scale = _scale_factor(rescale_grad, op)
    groups = [[weight, grad, mean, var]]
    res = _adamw_steps(op, groups, scale, [float(lr)], [float(eta)], [float(wd)], beta1, beta2,
                       epsilon, clip_gradient, mp=False)
    if res[0] is not None and grad.stype == "default":
        with torch.no_grad():   # MXNet's kernel leaves rescale_grad * grad (unclipped) in grad
            _state(grad, op, "grad").mul_(scale)
    return _adamw_out(res, groups, out, op)[0]


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9,
                    beta2=0.999, epsilon=1e-8, wd=0.0, clip_gradient=-1.0, out=None,
                    name=None):
    """:func:`adamw_update` on the float32 master copy ``weight32`` of a float16 weight
    (updated in place; the new weight is its cast)."""
    op = "mp_adamw_update"
    scale = _scale_factor(rescale_grad, op)
    groups = [[weight, grad, mean, var, weight32]]
    res = _adamw_steps(op, groups, scale, [float(lr)], [float(eta)], [float(wd)], beta1, beta2,
                       epsilon, clip_gradient, mp=True)
    return _adamw_out(res, groups, out, op)[0]


def _multi_adamw(op, lists, rescale_grad, lrs, wds, etas, out, size, mp, kwargs):
    n = len(lists[0])
    if any(len(x) != n for x in lists):
        raise MXNetError(f"{op}: the weight, gradient and state lists have lengths "
                         f"{[len(x) for x in lists]}; they must be equal")
    if size and size != n:
        raise MXNetError(f"{op}: size={size} but {n} weights were given")
    unknown = set(kwargs) - {"beta1", "beta2", "epsilon", "clip_gradient"}
    if unknown:
        raise TypeError(f"{op}: unexpected keyword arguments {sorted(unknown)}")
    scale = _scale_factor(rescale_grad, op)
    groups = [list(g) for g in zip(*lists)]
    res = _adamw_steps(op, groups, scale, _rates(lrs, n, op, "lrs"), _rates(etas, n, op, "etas"),
                       _rates(wds, n, op, "wds"), kwargs.get("beta1", 0.9),
                       kwargs.get("beta2", 0.999), kwargs.get("epsilon", 1e-8),
                       kwargs.get("clip_gradient", -1.0), mp=mp)
    return _adamw_out(res, groups, out, op)


def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas, out=None,
                       name=None, size=0, **kwargs):
    """:func:`adamw_update` on lists of weights, one ``lr``, ``wd`` and ``eta`` each.

    Parameters
    ----------
    weights, grads, mean, var : list of NDArray
    rescale_grad : NDArray or float
    lrs, wds, etas : sequence of float
    out : list of NDArray, optional
    size : int, optional
        The number of weights (checked when given).
    **kwargs
        ``beta1``, ``beta2``, ``epsilon``, ``clip_gradient``.

    Returns
    -------
    list of NDArray
    """
    return _multi_adamw("multi_adamw_update", [weights, grads, mean, var], rescale_grad, lrs,
                        wds, etas, out, size, False, kwargs)


def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas,
                          out=None, name=None, size=0, **kwargs):
    """:func:`multi_adamw_update` on float32 master copies ``weights32`` (updated in place)."""
    return _multi_adamw("multi_mp_adamw_update", [weights, grads, mean, var, weights32],
                        rescale_grad, lrs, wds, etas, out, size, True, kwargs)


# ------------------------------------------------------------------------- Group AdaGrad
def group_adagrad_update(weight, grad, history, lr, rescale_grad=1.0, clip_gradient=-1.0,
                         epsilon=1e-5, out=None, name=None):
    """Group AdaGrad (``nd.contrib.group_adagrad_update``): one accumulator per row,
    ``history += mean(g**2 over the row)``, ``weight - lr * g / sqrt(history + epsilon)``
    with ``g = clip(rescale_grad * grad)``.

    A row_sparse gradient updates only its rows (MXNet's CPU kernel); a dense one every row.

    Parameters
    ----------
    weight : NDArray
        2-D or more; ``history`` has shape ``(weight.shape[0], 1)``.
    grad : NDArray
    history : NDArray
        Updated in place.
    lr : float
    rescale_grad : float, default 1
    clip_gradient : float, default -1
    epsilon : float, default 1e-5
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    op = "group_adagrad_update"
    if not isinstance(weight, NDArray) or not isinstance(history, NDArray):
        raise TypeError(f"{op}: weight and history must be NDArrays")
    if tuple(history.shape) != (weight.shape[0], 1):
        raise MXNetError(f"{op}: history has shape {history.shape}, expected "
                         f"{(weight.shape[0], 1)} for a weight of shape {weight.shape}")
    if tuple(grad.shape) != tuple(weight.shape):
        raise MXNetError(f"{op}: grad has shape {grad.shape}, weight {weight.shape}")
    clip = clip_gradient if clip_gradient is not None and clip_gradient >= 0 else None
    # MXNet's operator writes the new weight to its output; in place when out is weight
    target = weight if out is weight else weight.copy()
    if getattr(grad, "stype", "default") == "row_sparse":
        from . import sparse
        sparse.sparse_group_adagrad_update(target, grad, history, lr, epsilon, rescale_grad,
                                           clip)
    else:
        with torch.no_grad():
            w = target._t if target.stype == "default" else None
            if w is None:
                raise MXNetError(f"{op}: a dense gradient needs a dense weight")
            g = _rescaled(_arr(grad, op, "grad"), rescale_grad, clip, w.dtype)
            h = _state(history, op, "history")
            h.add_((g * g).reshape(g.shape[0], -1).mean(dim=1, keepdim=True).to(h.dtype))
            scale = (h + epsilon).sqrt().reshape((g.shape[0],) + (1,) * (g.dim() - 1))
            w.sub_(lr * g / scale)
    if out is None or out is weight:
        return target
    out[:] = target
    return out
