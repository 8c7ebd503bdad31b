"""Adam and its relatives: Adam, AdamW, Adamax, Nadam, LAMB, FTML.

Update rules are MXNet 1.9.1's:

* Adam: ``g = clip(rescale*grad + wd*w)``; ``m = b1*m + (1-b1)*g``; ``v = b2*v + (1-b2)*g^2``;
  ``w -= lr*sqrt(1-b2^t)/(1-b1^t) * m/(sqrt(v) + eps)`` (weight decay enters the gradient,
  the bias correction goes into the learning rate, ``eps`` is added to ``sqrt(v)``).
* AdamW (neogluon's addition; MXNet 1.9.1 has only the ``adamw_update`` operator): decoupled
  weight decay. ``g = clip(rescale*grad)``, the same moments, and
  ``w -= eta*(m/(sqrt(v) + eps) + wd*w)`` with ``eta = lr*sqrt(1-b2^t)/(1-b1^t)`` — MXNet's
  ``adamw_update`` driven the way GluonNLP and MXNet 2's AdamW drive it (``lr=1, eta=``the
  bias-corrected learning rate). Note that the decay is scaled by the bias-corrected rate,
  unlike ``torch.optim.AdamW``.
* Adamax: ``g = clip(rescale*grad + wd*w)``; ``m = b1*m + (1-b1)*g``; ``u = max(b2*u, |g|)``;
  ``w -= lr/(1-b1^t) * m/u``.
* Nadam: Adam with Nesterov momentum and MXNet's momentum schedule; the schedule product
  ``m_schedule`` is one number on the optimizer, multiplied at every index's update.
* LAMB: Adam-style direction (bias correction optional) plus ``wd*w``, scaled by the trust ratio
  ``|w|/|direction|`` (``|w|`` bounded by ``lower_bound``/``upper_bound``).
* FTML: follow the moving leader.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from . import _ckernels as ck
from . import _math as M
from . import fused
from .optimizer import _MultiTensor, _ck_clip, _f32, _f32s, _groups, _zeros_like, register

__all__ = ["Adam", "AdamW", "Adamax", "Nadam", "LAMB", "FTML"]

_add_ = torch._foreach_add_
_mul_ = torch._foreach_mul_


def _moments(g, means, vars_, beta1, beta2):
    _mul_(means, beta1)
    _add_(means, g, alpha=1.0 - beta1)
    _mul_(vars_, beta2)
    torch._foreach_addcmul_(vars_, g, g, value=1.0 - beta2)


class _AdamBase(_MultiTensor):
    _decoupled = False

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        counts = self._index_update_count
        ts = [counts[i] for i in indices]
        means = [s[0] for s in states]
        vars_ = [s[1] for s in states]
        clip = self._clip()
        # MXNet's adam_update/adamw_update take float32 hyper-parameters.
        r = _f32(self.rescale_grad)
        b1, b2, eps = _f32(self.beta1), _f32(self.beta2), _f32(self.epsilon)
        if clip is not None:
            clip = _f32(clip)
        if ck.usable(ws, gs, means, vars_):
            fused.make_exact(indices, scales)
            corr = {t: math.sqrt(1.0 - self.beta2 ** t) / (1.0 - self.beta1 ** t)
                    for t in set(ts)}
            lr_bc = _f32s([lr * corr[t] for lr, t in zip(lrs, ts)])
            ck.run(ck.K_ADAMW if self._decoupled else ck.K_ADAM, ws, gs, s0=means, s1=vars_,
                   lr=lr_bc, wd=_f32s(wds), params=[r, _ck_clip(clip), b1, b2, eps])
            return
        for (lr, wd, t), pos in _groups(zip(lrs, wds, ts)):
            lr_bc = _f32(lr * math.sqrt(1.0 - self.beta2 ** t) / (1.0 - self.beta1 ** t))
            wd = _f32(wd)
            if len(pos) == len(ws):
                idx, w, g, m, v = indices, ws, gs, means, vars_
            else:
                idx, w, g, m, v = (M.pick(indices, pos), M.pick(ws, pos), M.pick(gs, pos),
                                   M.pick(means, pos), M.pick(vars_, pos))
            if clip is None and fused.adam(idx, w, g, m, v, lr_bc, wd, t, b1, b2, eps, r,
                                           scales, decoupled=self._decoupled):
                continue
            fused.make_exact(idx, scales)
            if self._decoupled:
                gg = M.scaled_grads(g, r, clip)
            else:
                gg = M.scaled_grads_wd(g, w, r, wd, clip)
            _moments(gg, m, v, b1, b2)
            den = torch._foreach_sqrt(v)
            _add_(den, eps)
            if self._decoupled:
                d = torch._foreach_div(m, den)
                if wd:
                    _add_(d, w, alpha=wd)
                _add_(w, d, alpha=-lr_bc)
            else:
                torch._foreach_addcdiv_(w, m, den, value=-lr_bc)


@register
class Adam(_AdamBase):
    """Adam (MXNet's maths, see the module docstring).

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1 : float, default 0.9
    beta2 : float, default 0.999
    epsilon : float, default 1e-8
    lazy_update : bool, default True
        Lazy updates for row_sparse gradients (sparse support comes separately).
    **kwargs
        See :class:`Optimizer`.
    """


@register
class AdamW(_AdamBase):
    """Adam with decoupled weight decay (neogluon's addition; see the module docstring).

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1 : float, default 0.9
    beta2 : float, default 0.999
    epsilon : float, default 1e-8
    **kwargs
        See :class:`Optimizer`; ``wd`` is the decoupled decay.
    """

    _decoupled = True


@register
class Adamax(_MultiTensor):
    """Adamax, Adam with the infinity norm (MXNet's maths).

    Parameters
    ----------
    learning_rate : float, default 0.002
    beta1 : float, default 0.9
    beta2 : float, default 0.999
    **kwargs
        See :class:`Optimizer`.
    """

    _clip_if_truthy = False

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        ts = [self._index_update_count[i] for i in indices]
        ms_, us_ = [s[0] for s in states], [s[1] for s in states]
        if ck.usable(ws, gs, ms_, us_):
            ck.run(ck.K_ADAMAX, ws, gs, s0=ms_, s1=us_,
                   lr=[lr / (1.0 - self.beta1 ** t) for lr, t in zip(lrs, ts)], wd=wds,
                   params=[self.rescale_grad, _ck_clip(self._clip()), self.beta1, self.beta2,
                           1. - self.beta1])
            return
        for (lr, wd, t), pos in _groups(zip(lrs, wds, ts)):
            w, g = M.pick(ws, pos), M.pick(gs, pos)
            m = [states[p][0] for p in pos]
            u = [states[p][1] for p in pos]
            lr_t = lr / (1.0 - self.beta1 ** t)
            gg = M.scaled_grads_wd(g, w, self.rescale_grad, wd, self._clip())
            _mul_(m, self.beta1)
            _add_(m, gg, alpha=1.0 - self.beta1)
            _mul_(u, self.beta2)
            torch._foreach_maximum_(u, torch._foreach_abs(gg))
            torch._foreach_addcdiv_(w, m, u, value=-lr_t)


@register
class Nadam(_MultiTensor):
    """Nadam: Adam with Nesterov momentum (MXNet's maths).

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1 : float, default 0.9
    beta2 : float, default 0.999
    epsilon : float, default 1e-8
    schedule_decay : float, default 0.004
    **kwargs
        See :class:`Optimizer`.
    """

    _clip_if_truthy = False
    _order_dependent = True  # m_schedule advances at every index's update

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        b1, b2 = self.beta1, self.beta2
        one_m, one_m_next, ts, moms = [], [], [], []
        # MXNet advances the schedule product once per index, in call order.
        for i in indices:
            t = self._index_update_count[i]
            mom_t = b1 * (1. - 0.5 * (pow(0.96, t * self.schedule_decay)))
            mom_t1 = b1 * (1. - 0.5 * (pow(0.96, (t + 1) * self.schedule_decay)))
            self.m_schedule = self.m_schedule * mom_t
            m_next = self.m_schedule * mom_t1
            one_m.append(1. - self.m_schedule)
            one_m_next.append(1. - m_next)
            ts.append(t)
            moms.append((mom_t, mom_t1))
        means = [s[0] for s in states]
        vars_ = [s[1] for s in states]
        if ck.usable(ws, gs, means, vars_):
            # one call per update count (normally one): the momentum and bias-correction
            # scalars MXNet rounds once each depend on it
            for t, pos in _groups(ts):
                mom_t, mom_t1 = moms[pos[0]]
                sel = (lambda lst: [lst[p] for p in pos]) if len(pos) < len(ts) else list
                ck.run(ck.K_NADAM, sel(ws), sel(gs), s0=sel(means), s1=sel(vars_),
                       lr=sel(lrs), wd=sel(wds), a=sel(one_m), b=sel(one_m_next),
                       params=[self.rescale_grad, _ck_clip(self._clip()), b1, b2, self.epsilon,
                               1. - b1, 1. - b2, 1. - mom_t, mom_t1, 1. - pow(b2, t)])
            return
        if len(set(wds)) == 1:
            gg = M.scaled_grads_wd(gs, ws, self.rescale_grad, wds[0], self._clip())
        else:
            gg = torch._foreach_mul(gs, self.rescale_grad)
            _add_(gg, torch._foreach_mul(ws, wds))
            clip = self._clip()
            if clip is not None:
                torch._foreach_clamp_min_(gg, -clip)
                torch._foreach_clamp_max_(gg, clip)
        _moments(gg, means, vars_, b1, b2)
        bar = torch._foreach_mul(gg, [(1. - mt) / om for (mt, _), om in zip(moms, one_m)])
        _add_(bar, torch._foreach_mul(means, [mt1 / om for (_, mt1), om in
                                              zip(moms, one_m_next)]))
        den = torch._foreach_mul(vars_, [1. / (1. - pow(b2, t)) for t in ts])
        torch._foreach_sqrt_(den)
        _add_(den, self.epsilon)
        _mul_(bar, [-lr for lr in lrs])
        torch._foreach_div_(bar, den)
        _add_(ws, bar)


@register
class LAMB(_MultiTensor):
    """LAMB: layer-wise adaptive moments (MXNet's maths).

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1 : float, default 0.9
    beta2 : float, default 0.999
    epsilon : float, default 1e-6
    lower_bound, upper_bound : float, optional
        Bounds on the weight norm in the trust ratio.
    bias_correction : bool, default True
    **kwargs
        See :class:`Optimizer`.
    """

    _own_mp = True

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction
        self.aggregate_num = 45

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        b1, b2, eps = self.beta1, self.beta2, self.epsilon
        means = [s[0] for s in states]
        vars_ = [s[1] for s in states]
        if ck.usable(ws, gs, means, vars_):
            self._step_kernels(indices, ws, gs, means, vars_, lrs, wds)
            return
        # the kernel's (and MXNet's lamb_update_phase1's) float32 hyper-parameters and
        # bias-correction reciprocals
        b1, b2, eps = _f32(b1), _f32(b2), _f32(eps)
        gg = M.scaled_grads(gs, self.rescale_grad, self._clip())
        _moments(gg, means, vars_, b1, b2)
        if self.bias_correction:
            ts = [self._index_update_count[i] for i in indices]
            T = M.np_type(ws[0])
            mh = torch._foreach_mul(means, [float(T(1) / T(1.0 - self.beta1 ** t))
                                            for t in ts])
            vh = torch._foreach_mul(vars_, [float(T(1) / T(1.0 - self.beta2 ** t))
                                            for t in ts])
        else:
            mh, vh = means, vars_
        den = torch._foreach_sqrt(vh)
        _add_(den, eps)
        u = torch._foreach_div(mh, den)
        if any(wds):
            _add_(u, torch._foreach_mul(ws, wds))
        r1 = torch.stack(torch._foreach_norm(ws)).float()
        r2 = torch.stack(torch._foreach_norm(u)).float()
        if self.lower_bound:
            r1 = torch.clamp(r1, min=self.lower_bound)
        if self.upper_bound:
            r1 = torch.clamp(r1, max=self.upper_bound)
        ratio = torch.where((r1 == 0) | (r2 == 0), torch.ones_like(r1), r1 / r2)
        ratio = ratio.cpu().tolist()
        _mul_(u, [-lr * q for lr, q in zip(lrs, ratio)])
        _add_(ws, u)


    def _step_kernels(self, indices, ws, gs, means, vars_, lrs, wds):
        b1, b2 = _f32(self.beta1), _f32(self.beta2)
        if self.bias_correction:
            ts = [self._index_update_count[i] for i in indices]
            a = [1.0 - self.beta1 ** t for t in ts]
            b = [1.0 - self.beta2 ** t for t in ts]
        else:
            a = b = [1.0] * len(ws)
        wd = _f32s(wds)
        params = [_f32(self.rescale_grad), _ck_clip(self._clip()), b1, b2, _f32(self.epsilon)]
        sw, su = ck.run(ck.K_LAMB1, ws, gs, s0=means, s1=vars_, lr=lrs, wd=wd, a=a, b=b,
                        params=params, want_sums=True)
        # MXNet computes the norms in float32
        r1 = np.sqrt(np.asarray(sw)).astype(np.float32).astype(np.float64)
        r2 = np.sqrt(np.asarray(su)).astype(np.float32).astype(np.float64)
        lo, hi = self.lower_bound, self.upper_bound
        if lo and lo >= 0:
            r1 = np.maximum(r1, lo)
        if hi and hi >= 0:
            r1 = np.minimum(r1, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where((r1 == 0) | (r2 == 0), 1.0, r1 / r2)
        lr_t = np.asarray(_f32s(lrs)) * ratio
        ck.run(ck.K_LAMB2, ws, None, s0=means, s1=vars_, wd=wd, a=a, b=b, lr=lr_t.tolist(),
               params=params)


@register
class FTML(_MultiTensor):
    """FTML, follow the moving leader (MXNet's maths).

    Parameters
    ----------
    beta1 : float, default 0.6
    beta2 : float, default 0.999
    epsilon : float, default 1e-8
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight), _zeros_like(weight))

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        # the kernel's (and MXNet's ftml_update's) float32 hyper-parameters
        b1, b2, eps = _f32(self.beta1), _f32(self.beta2), _f32(self.epsilon)
        ts = [self._index_update_count[i] for i in indices]
        dl, vl, zl = ([s[j] for s in states] for j in range(3))
        if ck.usable(ws, gs, dl, vl, zl):
            ck.run(ck.K_FTML, ws, gs, s0=dl, s1=vl, s2=zl, lr=_f32s(lrs),
                   wd=_f32s(wds), c=ts,
                   params=[_f32(self.rescale_grad), _ck_clip(self._clip()), _f32(b1), _f32(b2),
                           _f32(self.epsilon)])
            return
        for (lr, wd, t), pos in _groups(zip(lrs, wds, ts)):
            w, g = M.pick(ws, pos), M.pick(gs, pos)
            d = [states[p][0] for p in pos]
            v = [states[p][1] for p in pos]
            z = [states[p][2] for p in pos]
            gg = M.scaled_grads_wd(g, w, self.rescale_grad, wd, self._clip())
            # v = b2 * v + ((1 - b2) * g) * g, rounded step by step as the kernel does
            # (addcmul's own order and fusing of the products differ between CPUs' builds)
            _mul_(v, b2)
            sq = torch._foreach_mul(gg, 1.0 - b2)
            _mul_(sq, gg)
            _add_(v, sq)
            T = M.np_type(w[0])   # the kernel evaluates these in the tensor's precision
            fa = T(1) - T(b1) ** T(t)
            fb = T(1) - T(b2) ** T(t)
            d_t = torch._foreach_div(v, float(fb))
            torch._foreach_sqrt_(d_t)
            _add_(d_t, eps)
            _mul_(d_t, float(fa / T(lr)))
            # separate products and sums, as the kernel rounds them (an add with alpha may
            # fuse its multiply)
            _mul_(z, b1)
            _add_(z, torch._foreach_mul(gg, 1.0 - b1))
            sig = torch._foreach_mul(d, -b1)
            _add_(sig, d_t)
            _mul_(sig, w)
            torch._foreach_sub_(z, sig)
            torch._foreach_copy_(d, d_t)
            nw = torch._foreach_div(z, d_t)
            _mul_(nw, -1.0)
            torch._foreach_copy_(w, nw)
