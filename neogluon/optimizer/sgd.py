"""SGD and its relatives: SGD (ccSGD), NAG, Signum, LARS, LBSGD, DCASGD, SGLD.

Update rules are MXNet 1.9.1's (``g`` below is ``clip(rescale_grad * grad, clip_gradient)``):

* SGD: ``mom = momentum*mom - lr*wd*w - lr*g; w += mom`` (without momentum
  ``w = (1 - lr*wd)*w - lr*g``).
* NAG: with ``u = g + wd*w``: ``w_new = w - lr*u + momentum*(momentum*mom - lr*u)`` and
  ``mom = momentum*mom - lr*(g + wd*w_new)``. (MXNet's kernel writes the weight before the
  momentum and so reads the new weight in the momentum's decay term; neogluon keeps that.)
* Signum: ``mom = momentum*mom - (1-momentum)*(wd*w + g); w = (1 - lr*wd_lh)*w + lr*sign(mom)``;
  momentum 0 is signSGD, ``w = (1 - lr*wd)*w - lr*sign(g)``.
* LARS: SGD with a per-layer learning rate ``lr*eta*|w|/(rescale*|grad| + wd*|w| + eps)``
  (not for names ending in gamma, beta or bias), and momentum corrected by the ratio of the
  current and previous learning rates.
* LBSGD: SGD on gradients accumulated over ``batch_scale`` calls, with a warm-up multiplier.
  The accumulated gradient is copied (MXNet keeps a reference to the first gradient array,
  which the Trainer's next backward pass overwrites).
* DCASGD: ``step = -lr*(g + wd*w + lamda*g*g*(w - w_prev))``, with momentum
  ``mom = momentum*mom + step``. MXNet 1.9.1 fails when momentum is non-zero (it takes the
  truth value of the momentum NDArray); neogluon runs the intended update.
* SGLD: ``w += -lr/2*(g + wd*w) + N(0, sqrt(lr))``.
"""
from __future__ import annotations

import math
import os

import numpy as np
import torch

from ..ndarray.ndarray import _new
from ..random import generator as _generator
from . import _ckernels as ck
from . import _math as M
from . import _rng_kernels as _rng
from . import fused
from .optimizer import _MultiTensor, _ck_clip, _f32, _f32s, _groups, _zeros_like, register

__all__ = ["SGD", "ccSGD", "NAG", "Signum", "LARS", "LBSGD", "DCASGD", "SGLD"]

_foreach_add_ = torch._foreach_add_
_foreach_mul_ = torch._foreach_mul_


def _agg_env(default):
    return int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", str(default)))


@register
class SGD(_MultiTensor):
    """Stochastic gradient descent with momentum and weight decay (MXNet's maths).

    Parameters
    ----------
    momentum : float, default 0.0
        The momentum.
    lazy_update : bool, default True
        Lazy updates for row_sparse gradients (sparse support comes separately).
    **kwargs
        See :class:`Optimizer`.
    """

    _own_mp = True

    _mp_master_last = True

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        self.aggregate_num = _agg_env(4)
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return _zeros_like(weight)
        return None

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        mom = self.momentum if self.momentum > 0 else 0.0
        moms = [s[0] for s in states]
        clip = self._clip()
        r = self.rescale_grad
        use_mom = mom > 0 and moms[0] is not None
        if ck.usable(ws, gs, moms if use_mom else None):
            fused.make_exact(indices, scales)
            ck.run(ck.K_SGD_MOM if use_mom else ck.K_SGD, ws, gs, s0=moms if use_mom else None,
                   lr=_f32s(lrs), wd=_f32s(wds),
                   params=[_f32(r), _ck_clip(clip), _f32(mom)])
            return
        for (lr, wd), pos in _groups(zip(lrs, wds)):
            if len(pos) == len(ws):
                idx, w, g, m = indices, ws, gs, moms
            else:
                idx, w, g, m = (M.pick(indices, pos), M.pick(ws, pos), M.pick(gs, pos),
                                M.pick(moms, pos))
            if clip is None and fused.sgd(idx, w, g, m if use_mom else [None], lr, wd,
                                          mom if use_mom else 0.0, r, scales):
                continue
            fused.make_exact(idx, scales)
            gg = M.scaled_grads(g, r, clip)
            if use_mom:
                M.sgd_mom(w, gg, m, lr, wd, mom)
            else:
                M.sgd_plain(w, gg, lr, wd)


@register
class ccSGD(SGD):  # noqa: N801 - MXNet's name
    """Alias of :class:`SGD` kept for MXNet compatibility."""


@register
class NAG(_MultiTensor):
    """Nesterov accelerated gradient (MXNet's maths, see the module docstring).

    Parameters
    ----------
    momentum : float, default 0.0
        The momentum.
    **kwargs
        See :class:`Optimizer`.
    """

    _own_mp = True

    _mp_master_last = True

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return _zeros_like(weight)
        return None

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        mom = self.momentum if self.momentum > 0 else 0.0
        moms = [s[0] for s in states]
        clip = self._clip()
        r = self.rescale_grad
        use_mom = mom > 0 and moms[0] is not None
        if ck.usable(ws, gs, moms if use_mom else None):
            fused.make_exact(indices, scales)
            ck.run(ck.K_NAG if use_mom else ck.K_SGD, ws, gs, s0=moms if use_mom else None,
                   lr=_f32s(lrs), wd=_f32s(wds),
                   params=[_f32(r), _ck_clip(clip), _f32(mom)])
            return
        for (lr, wd), pos in _groups(zip(lrs, wds)):
            idx, w, g, m = (M.pick(indices, pos), M.pick(ws, pos), M.pick(gs, pos),
                            M.pick(moms, pos))
            if not use_mom:
                if clip is None and fused.sgd(idx, w, g, [None], lr, wd, 0.0, r, scales):
                    continue
                fused.make_exact(idx, scales)
                M.sgd_plain(w, M.scaled_grads(g, r, clip), lr, wd)
                continue
            fused.make_exact(idx, scales)
            gg = M.scaled_grads(g, r, clip)
            gw = torch._foreach_add(gg, w, alpha=wd) if wd else gg
            look = torch._foreach_mul(m, mom)
            _foreach_add_(look, gw, alpha=-lr)
            _foreach_add_(w, gw, alpha=-lr)
            _foreach_add_(w, look, alpha=mom)
            # MXNet's kernel writes the weight before it updates the momentum, and reads the
            # weight again for the momentum's decay term: the new weight enters it.
            _foreach_mul_(m, mom)
            _foreach_add_(m, gg, alpha=-lr)
            if wd:
                _foreach_add_(m, w, alpha=-lr * wd)


@register
class Signum(_MultiTensor):
    """Signum: the sign of the momentum (signSGD when momentum is 0).

    Parameters
    ----------
    learning_rate : float, default 0.01
    momentum : float, default 0.9
    wd_lh : float, default 0.0
        Decoupled weight decay: the weight is scaled by ``1 - lr * wd_lh`` before the sign
        step, with momentum and, in neogluon, without it (MXNet 1.9.1 fails there).
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return _zeros_like(weight)
        return None

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        mom = self.momentum if self.momentum > 0 else 0.0
        moms = [s[0] for s in states]
        clip = self._clip()
        r = self.rescale_grad
        use_mom = mom > 0 and moms[0] is not None
        if ck.usable(ws, gs, moms if use_mom else None):
            ck.run(ck.K_SIGNUM if use_mom else ck.K_SIGNSGD, ws, gs,
                   s0=moms if use_mom else None, lr=_f32s(lrs),
                   wd=_f32s(wds),
                   params=[_f32(r), _ck_clip(clip), _f32(mom), _f32(self.wd_lh)])
            return
        for (lr, wd), pos in _groups(zip(lrs, wds)):
            w, g, m = M.pick(ws, pos), M.pick(gs, pos), M.pick(moms, pos)
            gg = M.scaled_grads(g, r, clip)
            if m[0] is not None and mom > 0:
                _foreach_mul_(m, mom)
                if wd:
                    _foreach_add_(m, w, alpha=-(1.0 - mom) * wd)
                _foreach_add_(m, gg, alpha=-(1.0 - mom))
                s = torch._foreach_sign(m)
                if self.wd_lh:
                    _foreach_mul_(w, 1.0 - lr * self.wd_lh)
                _foreach_add_(w, s, alpha=lr)
            else:
                s = torch._foreach_sign(gg)
                if wd:
                    _foreach_mul_(w, 1.0 - lr * wd)
                if self.wd_lh:  # MXNet 1.9.1 fails here (its signsgd operator has no wd_lh)
                    _foreach_mul_(w, 1.0 - lr * self.wd_lh)
                _foreach_add_(w, s, alpha=-lr)


@register
class LARS(_MultiTensor):
    """LARS: SGD with layer-wise adaptive learning rates (MXNet's maths).

    Parameters
    ----------
    momentum : float, default 0.0
    lazy_update : bool, default True
    eta : float, default 0.001
        LARS coefficient.
    eps : float, default 0
        Added to the denominator of the LARS ratio.
    momentum_correction : bool, default True
        Scale the momentum by the ratio of the current and previous learning rates.
    **kwargs
        See :class:`Optimizer`.
    """

    _NOT_CONFIG = _MultiTensor._NOT_CONFIG + ("_chunk_moms",)
    _own_mp = True

    _mp_master_last = True

    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0,
                 momentum_correction=True, **kwargs):
        self.aggregate_num = _agg_env(4)
        super().__init__(**kwargs)
        self.momentum = momentum
        self.momentum_correction = momentum_correction
        self.lazy_update = lazy_update
        self.eta = eta
        self.eps = eps
        self.skip = 0
        self.last_lr = None
        self.cur_lr = None

    def _get_lrs(self, indices):
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        lr = self._base_lr()
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        return self._apply_lr_mult(lr, indices)

    def set_wd_mult(self, args_wd_mult):
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not n.endswith("_weight"):
                self.wd_mult[n] = 0.0
        self.wd_mult.update(self._sym_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return _zeros_like(weight)
        return None

    def _count_and_get_lrs(self, index, chunk=None):
        # MXNet counts and evaluates the learning rate (and so the momentum correction) once
        # per group of `aggregate_num` tensors (the Updater's `chunk` too); the numbers depend on that grouping, so the
        # bookkeeping follows it while the update itself runs on the whole list.
        n = max(1, self.aggregate_num)
        lrs, moms = [], []
        for s in range(0, len(index), n):
            chunk = index[s:s + n]
            self._update_count(chunk)
            lrs.extend(self._get_lrs(chunk))
            mom = 0.0
            if self.momentum > 0:
                mom = self.momentum * (self.cur_lr / self.last_lr) \
                    if (self.momentum_correction and self.last_lr != 0) else self.momentum
            moms.extend([mom] * len(chunk))
        self._chunk_moms = moms
        return lrs

    def _is_lars(self, index):
        name = self.idx2name[index] if index in self.idx2name else str(index)
        return not (name.endswith("gamma") or name.endswith("beta") or name.endswith("bias"))

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        chunk_moms = self._chunk_moms
        lars_pos = [p for p, i in enumerate(indices) if self._is_lars(i)]
        lrs = _f32s(lrs)
        if lars_pos:
            # MXNet's multi_sum_sq + multi_lars, in float32; norms in one multi-tensor call
            wl, gl = M.pick(ws, lars_pos), M.pick(gs, lars_pos)
            if ck.usable(wl, gl):
                w_sq, g_sq = ck.run(ck.K_SUMSQ, wl, gl, params=[1.0, -1.0], want_sums=True)
                w_norm = torch.tensor(w_sq, dtype=torch.float64).sqrt().float()
                g_raw = torch.tensor(g_sq, dtype=torch.float64).sqrt().float()
            else:
                if wl[0].dtype is not torch.float32:
                    wl = [t.float() for t in wl]
                    gl = [t.float() for t in gl]
                w_norm = torch.stack(torch._foreach_norm(wl)).cpu()
                g_raw = torch.stack(torch._foreach_norm(gl)).cpu()
            g_norm = g_raw * np.float32(self.rescale_grad)
            lr_v = torch.tensor([lrs[p] for p in lars_pos], dtype=torch.float32)
            wd_v = torch.tensor([wds[p] for p in lars_pos], dtype=torch.float32)
            new = lr_v * np.float32(self.eta) * w_norm / (g_norm + wd_v * w_norm +
                                                           np.float32(self.eps))
            valid = (w_norm > 0) & (g_raw > 0)
            new = torch.where(valid, new, lr_v).tolist()
            for p, v in zip(lars_pos, new):
                lrs[p] = v
        moms = [s[0] for s in states]
        for mom, pos in _groups(chunk_moms):
            w, g, m = M.pick(ws, pos), M.pick(gs, pos), M.pick(moms, pos)
            lr_l, wd_l = M.pick(lrs, pos), M.pick(wds, pos)
            use_mom = mom > 0 and m[0] is not None
            if ck.usable(w, g, m if use_mom else None):
                ck.run(ck.K_SGD_MOM if use_mom else ck.K_SGD, w, g, s0=m if use_mom else None,
                       lr=_f32s(lr_l), wd=_f32s(wd_l),
                       params=[_f32(self.rescale_grad), _ck_clip(self._clip()), _f32(mom)])
                continue
            clip = self._clip()
            if use_mom:
                if clip is None:   # the kernel's step (lr*rescale)*g
                    M.sgd_mom_lists(w, g, m, lr_l, wd_l, mom, rescale=self.rescale_grad)
                else:
                    M.sgd_mom_lists(w, M.scaled_grads(g, self.rescale_grad, clip), m, lr_l,
                                    wd_l, mom)
            else:
                M.sgd_plain_lists(w, M.scaled_grads(g, self.rescale_grad, clip), lr_l, wd_l)


@register
class LBSGD(_MultiTensor):
    """Large-batch SGD with warm-up and gradient accumulation (MXNet's maths).

    Parameters
    ----------
    momentum : float, default 0.0
    multi_precision : bool, default False
    warmup_strategy : {'linear', 'power2', 'sqrt', 'lars'}, default 'linear'
    warmup_epochs : int, default 5
    batch_scale : int, default 1
        Number of calls whose gradients are accumulated into one update.
    updates_per_epoch : int, default 32
    begin_epoch : int, default 0
    num_epochs : int, default 60
    **kwargs
        See :class:`Optimizer`.
    """

    _count_first = False

    def __init__(self, momentum=0.0, multi_precision=False, warmup_strategy="linear",
                 warmup_epochs=5, batch_scale=1, updates_per_epoch=32, begin_epoch=0,
                 num_epochs=60, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.multi_precision = multi_precision
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.lbmult = 1
        self.cumgrads = {}
        self.adaptive = False
        self.admult = 1

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return _zeros_like(weight)
        return None

    def _get_lbmult(self, nup):
        nwup = self.warmup_epochs * self.updates_per_epoch
        maxmult = float(self.batch_scale)
        if nup >= nwup:
            return maxmult
        if nwup <= 1:
            return 1.0
        s = self.warmup_strategy
        if s == "linear":
            return 1.0 + (maxmult - 1) * nup / nwup
        if s == "power2":
            return 1.0 + (maxmult - 1) * (nup * nup) / (nwup * nwup)
        if s == "sqrt":
            return 1.0 + (maxmult - 1) * math.sqrt(float(nup) / nwup)
        return 1.0

    def _get_lars(self, weight, g, wd):
        w2 = float(torch.linalg.vector_norm(weight, dtype=torch.float64)) ** 2
        g2 = float(torch.linalg.vector_norm(g, dtype=torch.float64)) ** 2
        lars = math.sqrt(w2 / (g2 + wd * w2 + 1e-18))
        return min(max(lars, 0.01), 100)

    def _count_and_get_lrs(self, index, chunk=None):
        # MXNet's LBSGD updates index by index (finer than any `chunk`): each index's learning rate sees the counts
        # of the indices before it in the same call. The updates themselves are batched.
        lrs = []
        for i in index:
            lrs.extend(super()._count_and_get_lrs([i]))
        return lrs

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        clip = self._clip()
        mom = self.momentum if self.momentum > 0 else 0.0
        batches = {True: ([], [], [], [], []), False: ([], [], [], [], [])}
        for index, w, g, st, lr, wd in zip(indices, ws, gs, states, lrs, wds):
            mom_t = st[0]
            c = self.cumgrads.get(index)
            if c and c["num_cums"] > 0:
                prev, num = c["cum_grad"], c["num_cums"] + 1
            else:
                prev, num = 0, self.init_updates + 1
            if self.batch_scale == 1:
                # every call updates: nothing to accumulate (MXNet's sum is the gradient)
                g_use = g
            else:
                cum = g.clone() if not isinstance(prev, torch.Tensor) else prev + g
                self.cumgrads[index] = {"cum_grad": cum, "num_cums": num}
                if num % self.batch_scale != 0:
                    continue
                g_use = cum / self.batch_scale
            if self.warmup_strategy == "lars":
                lbmult = self._get_lars(w, g_use, wd)
            else:
                lbmult = self._get_lbmult(num)
            use_mom = mom_t is not None and mom > 0
            for lst, v in zip(batches[use_mom], (w, g_use, mom_t, _f32(lr * lbmult), _f32(wd))):
                lst.append(v)
            self.cumgrads[index] = {"cum_grad": 0, "num_cums": num}
        for use_mom, (w, g, m, lr_l, wd_l) in batches.items():
            if not w:
                continue
            if ck.usable(w, g, m if use_mom else None):
                ck.run(ck.K_SGD_MOM if use_mom else ck.K_SGD, w, g, s0=m if use_mom else None,
                       lr=lr_l, wd=wd_l,
                       params=[_f32(self.rescale_grad), _ck_clip(clip), _f32(mom)])
                continue
            gg = M.scaled_grads(g, self.rescale_grad, clip)
            if use_mom:
                M.sgd_mom_lists(w, gg, m, lr_l, wd_l, mom)
            else:
                M.sgd_plain_lists(w, gg, lr_l, wd_l)

    def _config_dict(self):
        d = super()._config_dict()
        d.pop("cumgrads", None)
        d["cumgrads_counts"] = [[k, v["num_cums"]] for k, v in self.cumgrads.items()]
        return d

    def _extra_arrays(self):
        return {f"cum_{i}": v["cum_grad"] for i, (k, v) in enumerate(self.cumgrads.items())
                if isinstance(v["cum_grad"], torch.Tensor)}

    def _load_extra_arrays(self, arrays):
        counts = getattr(self, "cumgrads_counts", [])
        self.__dict__.pop("cumgrads_counts", None)
        self.cumgrads = {}
        for i, (k, n) in enumerate(counts):
            self.cumgrads[k if not isinstance(k, list) else tuple(k)] = {
                "cum_grad": arrays.get(f"cum_{i}", 0), "num_cums": int(n)}


@register
class DCASGD(_MultiTensor):
    """Delay-compensated asynchronous SGD (MXNet's maths, momentum branch repaired).

    Parameters
    ----------
    momentum : float, default 0.0
    lamda : float, default 0.04
        Scale of the delay compensation.
    **kwargs
        See :class:`Optimizer`.
    """

    _clip_if_truthy = False

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        prev = _new(weight._t.clone(), weight.context)
        if self.momentum == 0.0:
            return (None, prev)
        return (_zeros_like(weight), prev)

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        moms = [s[0] for s in states]
        prevs = [s[1] for s in states]
        use_mom = moms[0] is not None
        if ck.usable(ws, gs, moms if use_mom else None, prevs):
            ck.run(ck.K_DCASGD, ws, gs, s0=moms if use_mom else None, s1=prevs, lr=lrs, wd=wds,
                   params=[self.rescale_grad, _ck_clip(self._clip()), self.momentum,
                           self.lamda])
            return
        for (lr, wd), pos in _groups(zip(lrs, wds)):
            w, g, m, pv = M.pick(ws, pos), M.pick(gs, pos), M.pick(moms, pos), M.pick(prevs, pos)
            gg = M.scaled_grads(g, self.rescale_grad, self._clip())
            comp = torch._foreach_mul(gg, self.lamda)
            _foreach_mul_(comp, gg)
            _foreach_mul_(comp, torch._foreach_sub(w, pv))
            step = torch._foreach_add(gg, w, alpha=wd) if wd else gg
            _foreach_add_(step, comp)
            _foreach_mul_(step, -lr)
            if m[0] is not None:
                _foreach_mul_(m, self.momentum)
                _foreach_add_(m, step)
                step = m
            torch._foreach_copy_(pv, w)
            _foreach_add_(w, step)


@register
class SGLD(_MultiTensor):
    """Stochastic gradient Langevin dynamics: ``w += -lr/2*(g + wd*w) + N(0, sqrt(lr))``.

    ``g`` is ``clip(rescale_grad * grad, clip_gradient)``, as in MXNet 1.9.1. As in MXNet, the
    noise of each weight is the draw ``mx.nd.random.normal(0, sqrt(lr), shape=weight.shape,
    dtype=weight.dtype, ctx=weight.context)`` would make at that point, weight after weight in
    the order of the update: after ``mx.random.seed(n)`` a program can reproduce it.

    Parameters
    ----------
    fast_noise : bool, default False
        neogluon's addition: on CPU (float32, float64) draw the noise inside the compiled
        update itself (ARS-7, a counter-based generator on AES rounds, and Box-Muller, keyed
        by one seed per call from the seeded generator and indexed by element position: the
        same numbers with any thread count). About 8x faster for large models; the noise is
        then still repeatable under ``mx.random.seed`` but no longer equals
        ``mx.nd.random.normal``'s draws.
    **kwargs
        See :class:`Optimizer`.
    """

    _clip_if_truthy = False

    def __init__(self, fast_noise=False, **kwargs):
        super().__init__(**kwargs)
        self.fast_noise = bool(fast_noise)

    def create_state(self, index, weight):
        return None

    def _noise(self, ws, std):
        """Fresh N(0, std) noise for each of ``ws``, drawn tensor by tensor in order exactly as
        ``nd.random.normal`` draws it."""
        return [torch.empty(t.shape, dtype=t.dtype, device=t.device).normal_(
            0.0, std, generator=_generator(t.device)) for t in ws]

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        if self.fast_noise:
            noise = None
        else:
            # drawn up front, weight by weight: the (lr, wd) grouping below must not change
            # which weight gets which draw
            noise = [self._noise([w], math.sqrt(lr))[0] for w, lr in zip(ws, lrs)]
        for (lr, wd), pos in _groups(zip(lrs, wds)):
            w, g = M.pick(ws, pos), M.pick(gs, pos)
            if noise is None and _rng.usable(w, g):
                # one fresh key per call: each step and each (lr, wd) group gets its own noise
                seed = _rng.draw_seed(_generator(w[0].device))
                _rng.sgld_update(w, g, lr, wd, self.rescale_grad, _ck_clip(self._clip()),
                                 math.sqrt(lr), seed)
                continue
            z = self._noise(w, math.sqrt(lr)) if noise is None else M.pick(noise, pos)
            gg = M.scaled_grads(g, self.rescale_grad, self._clip())
            if wd:
                _foreach_add_(gg, w, alpha=wd)
            _foreach_add_(w, gg, alpha=-lr / 2)
            _foreach_add_(w, z)

    def _config_dict(self):
        d = super()._config_dict()
        d.pop("_noise_buf", None)
        return d
