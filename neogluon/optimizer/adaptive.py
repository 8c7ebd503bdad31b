"""Per-coordinate adaptive optimizers: AdaGrad, AdaDelta, RMSProp, Ftrl.

Update rules are MXNet 1.9.1's:

* AdaGrad: ``g = clip(rescale*grad)``; ``h += g^2``; ``w -= lr*(g/sqrt(h + eps) + wd*w)``.
* AdaDelta: ``g = clip(rescale*grad)``; ``acc_g = rho*acc_g + (1-rho)*g^2``;
  ``d = sqrt(acc_d + eps)/sqrt(acc_g + eps)*g``; ``acc_d = rho*acc_d + (1-rho)*d^2``;
  ``w -= d + wd*w``. (MXNet 1.9.1 also multiplies the caller's gradient array by
  ``rescale_grad`` in place; neogluon leaves gradients unchanged.)
* RMSProp: ``g = clip(rescale*grad + wd*w)``; ``n = (1-g1)*g^2 + g1*n``;
  ``w -= lr*g/sqrt(n + eps)``; centered (Graves): also ``gm = (1-g1)*g + g1*gm``,
  ``delta = g2*delta - lr*g/sqrt(n - gm^2 + eps)``, ``w += delta``; then ``clip_weights``.
* Ftrl: ``g = clip(rescale*grad)``; ``z += g - (sqrt(n + g^2) - sqrt(n))*w/lr``; ``n += g^2``;
  ``w = (sign(z)*lamda1 - z)/((beta + sqrt(n))/lr + wd) * (|z| > lamda1)``.

MXNet 1.9.1 keeps these states in float32 whatever the weight's dtype, and so fails on float64
weights; neogluon keeps them in the weight's dtype, which is the same for float32.
"""
from __future__ import annotations

import torch

from . import _ckernels as ck
from . import _math as M
from .optimizer import _MultiTensor, _ck_clip, _f32, _f32s, _groups, _zeros_like, register

__all__ = ["AdaGrad", "AdaDelta", "RMSProp", "Ftrl"]

_add_ = torch._foreach_add_
_mul_ = torch._foreach_mul_


@register
class AdaGrad(_MultiTensor):
    """AdaGrad (MXNet's maths, see the module docstring).

    Parameters
    ----------
    eps : float, default 1e-7
        Added to the history under the square root.
    **kwargs
        See :class:`Optimizer`.
    """

    _clip_if_truthy = False

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return _zeros_like(weight)

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        hist = [s[0] for s in states]
        if ck.usable(ws, gs, hist):
            ck.run(ck.K_ADAGRAD, ws, gs, s0=hist, lr=lrs, wd=wds,
                   params=[self.rescale_grad, _ck_clip(self._clip()), self.float_stable_eps])
            return
        for (lr, wd), pos in _groups(zip(lrs, wds)):
            w, g, h = M.pick(ws, pos), M.pick(gs, pos), M.pick(hist, pos)
            gg = M.scaled_grads(g, self.rescale_grad, self._clip())
            torch._foreach_addcmul_(h, gg, gg)
            den = torch._foreach_add(h, self.float_stable_eps)
            torch._foreach_sqrt_(den)
            torch._foreach_div_(gg, den)
            if wd:
                _add_(gg, w, alpha=wd)
            _add_(w, gg, alpha=-lr)


@register
class AdaDelta(_MultiTensor):
    """AdaDelta (MXNet's maths; no learning rate).

    Parameters
    ----------
    rho : float, default 0.9
    epsilon : float, default 1e-5
    **kwargs
        See :class:`Optimizer`.
    """

    _clip_if_truthy = False

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        rho, eps = self.rho, self.epsilon
        ag, ad = [s[0] for s in states], [s[1] for s in states]
        if ck.usable(ws, gs, ag, ad):
            ck.run(ck.K_ADADELTA, ws, gs, s0=ag, s1=ad, lr=lrs, wd=wds,
                   params=[self.rescale_grad, _ck_clip(self._clip()), rho, eps, 1. - rho])
            return
        for wd, pos in _groups(wds):
            w, g = M.pick(ws, pos), M.pick(gs, pos)
            acc_g = [states[p][0] for p in pos]
            acc_d = [states[p][1] for p in pos]
            gg = M.scaled_grads(g, self.rescale_grad, self._clip())
            _mul_(acc_g, rho)
            torch._foreach_addcmul_(acc_g, gg, gg, value=1. - rho)
            num = torch._foreach_add(acc_d, eps)
            torch._foreach_sqrt_(num)
            den = torch._foreach_add(acc_g, eps)
            torch._foreach_sqrt_(den)
            torch._foreach_div_(num, den)
            _mul_(num, gg)
            _mul_(acc_d, rho)
            torch._foreach_addcmul_(acc_d, num, num, value=1. - rho)
            if wd:
                _add_(num, w, alpha=wd)
            torch._foreach_sub_(w, num)


@register
class RMSProp(_MultiTensor):
    """RMSProp, Tieleman & Hinton's or (``centered=True``) Graves's (MXNet's maths).

    Parameters
    ----------
    learning_rate : float, default 0.001
    gamma1 : float, default 0.9
        Decay of the squared-gradient average.
    gamma2 : float, default 0.9
        Momentum of the centered version.
    epsilon : float, default 1e-8
    centered : bool, default False
    clip_weights : float, optional
        Clip weights into ``[-clip_weights, clip_weights]`` after the update.
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8,
                 centered=False, clip_weights=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        if self.centered:
            return (_zeros_like(weight), _zeros_like(weight), _zeros_like(weight))
        return (_zeros_like(weight),)

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        g1, eps = self.gamma1, self.epsilon
        cw = self.clip_weights if (self.clip_weights and self.clip_weights >= 0) else None
        slots = [[s[j] for s in states] for j in range(3 if self.centered else 1)]
        if ck.usable(ws, gs, *slots):
            ck.run(ck.K_RMSPROPALEX if self.centered else ck.K_RMSPROP, ws, gs, *slots,
                   lr=_f32s(lrs), wd=_f32s(wds),
                   params=[_f32(self.rescale_grad), _ck_clip(self._clip()), _f32(g1),
                           _f32(eps), -1.0 if cw is None else _f32(cw), _f32(self.gamma2)])
            return
        # the kernel's (and MXNet's rmsprop(alex)_update's) float32 hyper-parameters
        g1, eps, g2 = _f32(g1), _f32(eps), _f32(self.gamma2)
        for (lr, wd), pos in _groups(zip(lrs, wds)):
            w, g = M.pick(ws, pos), M.pick(gs, pos)
            n = [states[p][0] for p in pos]
            gg = M.scaled_grads_wd(g, w, self.rescale_grad, wd, self._clip())
            _mul_(n, g1)
            torch._foreach_addcmul_(n, gg, gg, value=1. - g1)
            if not self.centered:
                den = torch._foreach_add(n, eps)
                torch._foreach_sqrt_(den)
                torch._foreach_addcdiv_(w, gg, den, value=-lr)
            else:
                gm = [states[p][1] for p in pos]
                delta = [states[p][2] for p in pos]
                _mul_(gm, g1)
                _add_(gm, gg, alpha=1. - g1)
                den = torch._foreach_mul(gm, gm)
                torch._foreach_sub_(den, n)
                _mul_(den, -1.0)
                _add_(den, eps)
                torch._foreach_sqrt_(den)
                _mul_(delta, g2)
                torch._foreach_addcdiv_(delta, gg, den, value=-lr)
                _add_(w, delta)
            if cw is not None:
                torch._foreach_clamp_min_(w, -cw)
                torch._foreach_clamp_max_(w, cw)


@register
class Ftrl(_MultiTensor):
    """FTRL-proximal (MXNet's maths).

    Parameters
    ----------
    lamda1 : float, default 0.01
        L1 regularisation.
    learning_rate : float, default 0.1
    beta : float, default 1
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        l1 = self.lamda1
        zl, nl = [s[0] for s in states], [s[1] for s in states]
        if ck.usable(ws, gs, zl, nl):
            ck.run(ck.K_FTRL, ws, gs, s0=zl, s1=nl, lr=_f32s(lrs),
                   wd=_f32s(wds),
                   params=[_f32(self.rescale_grad), _ck_clip(self._clip()), _f32(l1),
                           _f32(self.beta)])
            return
        for (lr, wd), pos in _groups(zip(lrs, wds)):
            w, g = M.pick(ws, pos), M.pick(gs, pos)
            z = [states[p][0] for p in pos]
            n = [states[p][1] for p in pos]
            gg = M.scaled_grads(g, self.rescale_grad, self._clip())
            g2 = torch._foreach_mul(gg, gg)
            sq_old = torch._foreach_sqrt(n)
            _add_(n, g2)
            sq_new = torch._foreach_sqrt(n)
            torch._foreach_sub_(sq_new, sq_old)
            _mul_(sq_new, w)
            _mul_(sq_new, 1.0 / lr)
            _add_(z, gg)
            torch._foreach_sub_(z, sq_new)
            sq = torch._foreach_sqrt(n)
            _add_(sq, self.beta)
            _mul_(sq, 1.0 / lr)
            _add_(sq, wd)
            num = torch._foreach_sign(z)
            _mul_(num, l1)
            torch._foreach_sub_(num, z)
            torch._foreach_div_(num, sq)
            # (|z| > lamda1) as 0/1 without a per-tensor loop: clamp(sign(|z| - lamda1), 0)
            mask = torch._foreach_abs(z)
            _add_(mask, -l1)
            torch._foreach_sign_(mask)
            torch._foreach_clamp_min_(mask, 0.0)
            _mul_(num, mask)
            torch._foreach_copy_(w, num)
